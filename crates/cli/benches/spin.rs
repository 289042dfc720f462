//! `just bench-spin`: barrier-check against Spin 6.5 (with its partial-order
//! reduction) on the family "N threads, each K rounds of arrive; wait on a
//! barrier of N", side by side in one run. Needs `spin` and `gcc` on PATH
//! (the justfile recipe installs spin). Prints N, K, states and time for
//! each tool and the time ratio, for barrier-check with its defaults,
//! without symmetry, and on threads whose bodies all differ. Not a test:
//! it only prints.

use std::process::Command;
use std::time::Instant;

fn promela(n: usize, k: usize) -> String {
    format!(
        "byte cnt = 0;\nbyte phase = 0;\nactive [{n}] proctype P() {{\n  byte my; byte r = 0;\n  do\n  :: r < {k} ->\n     atomic {{ my = phase; cnt++; if :: cnt == {n} -> cnt = 0; phase++ :: else -> skip fi }};\n     (phase != my);\n     r++\n  :: r >= {k} -> break\n  od\n}}\n"
    )
}

/// The family as litmus threads; `distinct`: each thread's body differs
/// (a register set to its index first), so no two threads are
/// interchangeable and symmetry has nothing to merge (issue 16's
/// "distinct explicit threads").
fn litmus(n: usize, k: usize, distinct: bool) -> String {
    let mut s = format!("litmus \"nk\"\nmodel amdgpu\nbarrier B = {n}\n");
    for i in 0..n {
        let own = if distinct { format!("r = {i}; ") } else { String::new() };
        s += &format!("thread T{i} {{ {own}join B; repeat {k} {{ arrive B; wait B }} }}\n");
    }
    s
}

/// Spin: (states stored, seconds) or why not.
fn spin(dir: &std::path::Path, n: usize, k: usize) -> Result<(u64, f64), String> {
    let pml = dir.join(format!("nk{n}_{k}.pml"));
    std::fs::write(&pml, promela(n, k)).map_err(|e| e.to_string())?;
    let ok = |c: &mut Command| c.current_dir(dir).output().map_err(|e| e.to_string());
    ok(Command::new("spin").arg("-a").arg(&pml))?;
    let cc = ok(Command::new("gcc").args(["-O2", "-DMEMLIM=8000", "-o", "pan", "pan.c"]))?;
    if !cc.status.success() {
        return Err(String::from_utf8_lossy(&cc.stderr).into_owned());
    }
    let start = Instant::now();
    let out = ok(Command::new("./pan").args(["-m10000000"]))?;
    let secs = start.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let states = text
        .lines()
        .find(|l| l.contains("states, stored"))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|v| v.parse::<f64>().ok())
        .ok_or_else(|| format!("no state count in Spin's output:\n{text}"))?;
    Ok((states as u64, secs))
}

fn main() {
    let bin = env!("CARGO_BIN_EXE_barrier-check");
    let dir = std::env::temp_dir().join("barrier-check-spin");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let limit = std::env::var("BENCH_TIMEOUT").unwrap_or_else(|_| "20".into());
    println!(
        "| N | K | Spin states | Spin time (s) | barrier-check | states | time (s) | stop | time ratio (bc / Spin) |"
    );
    println!("|---:|---:|---:|---:|---|---:|---:|---|---:|");
    for (n, k) in [
        (3, 1),
        (3, 2),
        (4, 1),
        (4, 2),
        (5, 1),
        (5, 2),
        (6, 1),
        (6, 2),
        (8, 2),
        (10, 2),
        (10, 3),
        (12, 3),
    ] {
        let (ss, st) = match spin(&dir, n, k) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("spin failed for N={n} K={k}: {e}");
                (0, f64::NAN)
            }
        };
        // The default (all reductions, one job: the threads have identical
        // bodies, so symmetry applies), without symmetry (partial-order
        // reductions only, like Spin's), and distinct bodies with every
        // reduction on.
        for (mode, extra, distinct) in [
            ("default", None, false),
            ("no symmetry", Some("--no-symmetry"), false),
            ("distinct bodies", None, true),
        ] {
            let path = dir.join(format!("nk{n}_{k}_{}.litmus", distinct as u8));
            std::fs::write(&path, litmus(n, k, distinct)).expect("write");
            let start = Instant::now();
            let out = Command::new(bin)
                .args(["check", "--format", "json", "--jobs", "1", "--timeout", &limit])
                .args(extra)
                .arg(&path)
                .output()
                .expect("run");
            let secs = start.elapsed().as_secs_f64();
            let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
            let r = &json["results"][0];
            let bs = r["stats"]["states"].as_u64().unwrap_or(0);
            let stop = r["stop"].as_str().unwrap_or("error");
            println!(
                "| {n} | {k} | {ss} | {st:.3} | {mode} | {bs} | {secs:.3} | {stop} | {:.2} |",
                secs / st
            );
        }
    }
}
