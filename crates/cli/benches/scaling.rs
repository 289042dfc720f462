//! `just bench`: the scaling table of issue "Performance" - symmetric
//! (kernel) and asymmetric (explicit threads) barrier families, threads x
//! phases: states, time, states/s, peak memory. Each cell runs the release
//! binary in its own process (peak memory is per process) with a time
//! limit; a cell that stops at a limit says so. Not a test: it only prints.

mod common;

fn litmus(family: &str, n: usize, k: usize) -> String {
    match family {
        "kernel __syncthreads" => format!(
            "litmus \"sym\"\nmodel cuda-sm80\nkernel blocks=1 threads={n} {{ repeat {k} {{ __syncthreads }} }}\n"
        ),
        "kernel split arrive/wait" => format!(
            "litmus \"split\"\nmodel cuda-sm80\nbarrier B = {n}\nkernel blocks=1 threads={n} {{ repeat {k} {{ t = arrive B; wait B, t }} }}\n"
        ),
        _ => {
            let mut s = format!("litmus \"asym\"\nmodel amdgpu\nbarrier B = {n}\n");
            for i in 0..n {
                s += &format!("thread T{i} {{ join B; repeat {k} {{ arrive B; wait B }} }}\n");
            }
            s
        }
    }
}

fn main() {
    let bin = env!("CARGO_BIN_EXE_barrier-check");
    let dir = std::env::temp_dir().join("barrier-check-bench");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let limit = common::bench_timeout(10.0);
    println!("| family | threads | phases | states | time (ms) | states/s | peak memory (MiB) | stop |");
    println!("|---|---:|---:|---:|---:|---:|---:|---|");
    for family in [
        "explicit threads arrive; wait",
        "kernel __syncthreads",
        "kernel split arrive/wait",
    ] {
        for n in [2usize, 3, 4, 5, 6, 8, 16, 32, 64] {
            let mut stopped = false;
            for k in 1..=4usize {
                if stopped {
                    break;
                }
                let path = dir.join(format!("{}-{n}-{k}.litmus", family.len()));
                std::fs::write(&path, litmus(family, n, k)).expect("write");
                let cell = common::check_once(bin, &path, limit, &[]);
                let states = cell.states();
                let ms = cell.result["stats"]["elapsed_ms"]
                    .as_f64()
                    .unwrap_or(cell.wall_s * 1000.0);
                let stop = cell.stop();
                let peak = &cell.peak_mib;
                let rate = if ms > 0.0 { states as f64 / (ms / 1000.0) } else { 0.0 };
                println!("| {family} | {n} | {k} | {states} | {ms:.1} | {rate:.0} | {peak} | {stop} |");
                stopped = stop != "exhausted";
            }
        }
    }
}
