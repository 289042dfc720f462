//! `just bench-pipelines`: issue 36's table of realistic pipelines and
//! buggy kernels (`benches/pipelines/*.litmus`, each with its `expect`
//! and a `# target: SECONDS` line), each checked once by the release
//! binary in its own process (`--jobs 1`, peak memory per process) under a
//! time limit (`BENCH_TIMEOUT`, default 30 s). With `BENCH_BEFORE=BIN`
//! (an older build of barrier-check) each file is also checked by that
//! binary, in the same run, and both columns are printed side by side.
//! Prints a markdown table: kernel, verdict, states, time, peak memory,
//! stop, target, met (exhausted, within the target, and the verdict its
//! `expect` states). Arguments (`cargo bench --bench pipelines -- ARGS`)
//! go to every check. Not a test: it only prints.

mod common;

use std::path::{Path, PathBuf};

/// One column: verdict, states, time, peak memory, stop.
fn column(cell: &common::Cell) -> String {
    format!(
        "{} | {} | {:.2} | {} | {}",
        cell.verdict(),
        cell.states(),
        cell.wall_s,
        cell.peak_mib,
        cell.stop()
    )
}

fn main() {
    let bin = env!("CARGO_BIN_EXE_barrier-check");
    let before = std::env::var("BENCH_BEFORE").ok();
    let limit = common::bench_timeout(30.0);
    let mut extra: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    extra.extend(["--jobs".to_string(), "1".to_string()]);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/pipelines");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("benches/pipelines")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "litmus"))
        .collect();
    files.sort();
    let head = "verdict | states | time (s) | peak (MiB) | stop";
    match &before {
        Some(_) => {
            println!("| kernel | before: {head} | after: {head} | target (s) | met |");
            println!("|---|---|---:|---:|---:|---|---|---:|---:|---:|---|---:|---|");
        }
        None => {
            println!("| kernel | {head} | target (s) | met |");
            println!("|---|---|---:|---:|---:|---|---:|---|");
        }
    }
    for path in files {
        let text = std::fs::read_to_string(&path).expect("read");
        let target: f64 = text
            .lines()
            .find_map(|l| l.strip_prefix("# target:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(1.0);
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let old = before.as_ref().map(|b| common::check_once(b, &path, limit, &extra));
        let cell = common::check_once(bin, &path, limit, &extra);
        let met = cell.stop() == "exhausted" && cell.wall_s < target && cell.result["pass"].as_bool() == Some(true);
        let met = if met { "yes" } else { "no" };
        match old {
            Some(old) => println!("| {name} | {} | {} | < {target} | {met} |", column(&old), column(&cell)),
            None => println!("| {name} | {} | < {target} | {met} |", column(&cell)),
        }
    }
}
