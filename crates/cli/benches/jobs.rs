//! `just bench-jobs`: the parallel explorer, 1 job against 2, side by side
//! on two tests of over a million states each: three threads of atomic
//! fetch-adds (every interleaving is its own state) and 13 explicit threads
//! that join, arrive on and wait at one barrier (symmetry off, so the
//! interleavings stay). Runs alternate between the two settings,
//! `BENCH_RUNS` times each (default 3), and the table gives each run's
//! search time (`elapsed_ms`: the liveness analysis and freeing the states
//! included) and wall time, then the best and median times and their
//! ratios. It also checks that both settings print the same JSON (elapsed
//! times aside). Not a test: it only prints.

use std::process::Command;
use std::time::Instant;

fn atomics() -> String {
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

fn barrier() -> String {
    let mut s = String::from("litmus \"barrier\"\nmodel amdgpu\nbarrier B = 13\n");
    for t in 0..13 {
        s += &format!("thread T{t} {{ join B; arrive B; wait B }}\n");
    }
    s + "expect ok\n"
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let bin = env!("CARGO_BIN_EXE_barrier-check");
    let dir = std::env::temp_dir().join("barrier-check-bench");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    for (name, text, extra) in [
        ("atomics", atomics(), vec![]),
        ("barrier", barrier(), vec!["--no-symmetry", "--max-memory", "3500"]),
    ] {
        let path = dir.join(format!("jobs-{name}.litmus"));
        std::fs::write(&path, text).expect("write");
        println!("### {name}\n");
        println!("| jobs | run | states | search (ms) | wall (ms) |");
        println!("|---:|---:|---:|---:|---:|");
        let mut times: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        let mut outputs: [Option<serde_json::Value>; 2] = [None, None];
        for run in 1..=runs {
            for (i, jobs) in ["1", "2"].into_iter().enumerate() {
                let start = Instant::now();
                let out = Command::new(bin)
                    .args(["check", "--format", "json", "--jobs", jobs])
                    .args(&extra)
                    .arg(&path)
                    .output()
                    .expect("run barrier-check");
                let wall = start.elapsed().as_secs_f64() * 1000.0;
                let mut json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON output");
                let r = &mut json["results"][0];
                let states = r["stats"]["states"].as_u64().unwrap_or(0);
                let ms = r["stats"]["elapsed_ms"].as_f64().unwrap_or(f64::NAN);
                r["stats"]["elapsed_ms"] = serde_json::Value::Null;
                times[i].push(ms);
                println!("| {jobs} | {run} | {states} | {ms:.0} | {wall:.0} |");
                outputs[i] = Some(json);
            }
        }
        let best = |v: &[f64]| v.iter().copied().fold(f64::MAX, f64::min);
        let (b1, b2) = (best(&times[0]), best(&times[1]));
        let (m1, m2) = (median(times[0].clone()), median(times[1].clone()));
        println!(
            "\nbest: 1 job {b1:.0} ms, 2 jobs {b2:.0} ms ({:.2}x); median: {m1:.0} ms, {m2:.0} ms ({:.2}x); identical JSON: {}\n",
            b1 / b2,
            m1 / m2,
            outputs[0] == outputs[1]
        );
    }
}
