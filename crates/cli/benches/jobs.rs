//! `just bench-jobs`: the parallel explorer, 1 job against 2, side by side
//! on one test of over a million states (three threads of atomic
//! fetch-adds: every interleaving is its own state). Runs alternate
//! between the two settings, `BENCH_RUNS` times each (default 3), and the
//! table gives each run's search time (`elapsed_ms`, the liveness analysis
//! included) and wall time, then the ratio of the best times. It also
//! checks that both settings print the same JSON (elapsed times aside).
//! Not a test: it only prints.

use std::process::Command;
use std::time::Instant;

fn litmus() -> String {
    let mut s = String::from("litmus \"atomics\"\nmodel amdgpu\nvar x = 0\nvar y = 0\n");
    for t in 0..3 {
        let body: Vec<String> = (0..6)
            .map(|i| {
                format!(
                    "r{i} = fetch_add {}, {}",
                    if (i + t) % 2 == 0 { "x" } else { "y" },
                    t + 1
                )
            })
            .collect();
        s += &format!("thread T{t} {{ {} }}\n", body.join("; "));
    }
    s + "expect ok\n"
}

fn main() {
    let bin = env!("CARGO_BIN_EXE_barrier-check");
    let dir = std::env::temp_dir().join("barrier-check-bench");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("jobs-atomics.litmus");
    std::fs::write(&path, litmus()).expect("write");
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    println!("| jobs | run | states | search (ms) | wall (ms) |");
    println!("|---:|---:|---:|---:|---:|");
    let mut best = [f64::MAX; 2];
    let mut outputs: [Option<serde_json::Value>; 2] = [None, None];
    for run in 1..=runs {
        for (i, jobs) in ["1", "2"].into_iter().enumerate() {
            let start = Instant::now();
            let out = Command::new(bin)
                .args(["check", "--format", "json", "--jobs", jobs])
                .arg(&path)
                .output()
                .expect("run barrier-check");
            let wall = start.elapsed().as_secs_f64() * 1000.0;
            let mut json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON output");
            let r = &mut json["results"][0];
            let states = r["stats"]["states"].as_u64().unwrap_or(0);
            let ms = r["stats"]["elapsed_ms"].as_f64().unwrap_or(f64::NAN);
            r["stats"]["elapsed_ms"] = serde_json::Value::Null;
            best[i] = best[i].min(ms);
            println!("| {jobs} | {run} | {states} | {ms:.0} | {wall:.0} |");
            outputs[i] = Some(json);
        }
    }
    println!();
    println!(
        "best search time: 1 job {:.0} ms, 2 jobs {:.0} ms, speedup {:.2}x; identical JSON: {}",
        best[0],
        best[1],
        best[0] / best[1],
        outputs[0] == outputs[1]
    );
}
