//! `just bench-targets`: the kernels of issue 16's targets table, each
//! checked once by the release binary in its own process (peak memory is
//! per process), with a time limit (`BENCH_TIMEOUT`, default 15 s). Prints
//! a markdown table: shape, verdict, states, time, peak memory, stop, and
//! the target. Arguments (`cargo bench --bench targets -- ARGS`) are passed to every check (for
//! example `-- --no-symmetry` to measure a reduction's share). Not a test:
//! it only prints.

mod common;
#[path = "../tests/shapes/warp_pipeline.rs"]
mod warp_pipeline;

/// One shape of the table: its name, its litmus text, the target in seconds.
struct Shape {
    name: String,
    text: String,
    target_s: f64,
}

fn kernel(name: &str, model: &str, decls: &str, launch: &str, body: &str, target_s: f64) -> Shape {
    Shape {
        name: name.to_string(),
        text: format!("litmus \"{name}\"\nmodel {model}\n{decls}kernel {launch} {{\n{body}\n}}\n"),
        target_s,
    }
}

/// The warp-specialized mbarrier pipeline (`tests/shapes/warp_pipeline.rs`).
fn pipeline(threads: u32, stages: u32, iters: u32) -> Shape {
    let name = format!(
        "warp-specialized mbarrier pipeline, 1 producer + {} consumer warps, {stages} stages, {iters} iterations, T={threads}",
        (threads - 32) / 32
    );
    Shape {
        text: warp_pipeline::warp_pipeline(&name, threads, stages, iters),
        name,
        target_s: 1.0,
    }
}

fn shapes() -> Vec<Shape> {
    let half = 128;
    vec![
        kernel(
            "repeat 4 { __syncthreads }, T=1024",
            "cuda-sm80",
            "",
            "blocks=1 threads=1024",
            "  repeat 4 { __syncthreads }",
            0.1,
        ),
        kernel(
            "broadcast: tid 0 writes, __syncthreads, all read, T=1024",
            "cuda-sm80",
            "var s scope=block\n",
            "blocks=1 threads=1024",
            "  if tid == 0 { write s }\n  __syncthreads\n  read s",
            0.5,
        ),
        kernel(
            "named producer/consumer on tid < T/2, T=256",
            "cuda-sm80",
            "",
            "blocks=1 threads=256",
            &format!("  if tid < {half} {{ bar.sync 2, 256; bar.arrive 1, 256 }} else {{ bar.arrive 2, 256; bar.sync 1, 256 }}"),
            1.0,
        ),
        kernel(
            "warp 0 produces with bar.arrive, the rest bar.sync, T=384",
            "cuda-sm80",
            "",
            "blocks=1 threads=384",
            "  if warp == 0 { bar.arrive 1, 384 } else { bar.sync 1, 384 }",
            1.0,
        ),
        pipeline(96, 4, 8),
        kernel(
            "repeat 4 { __syncthreads }, B=64 x T=64",
            "cuda-sm80",
            "",
            "blocks=64 threads=64",
            "  repeat 4 { __syncthreads }",
            1.0,
        ),
        kernel(
            "cooperative repeat 4 { r = r + 1; grid.sync }, B=64 x T=64",
            "cuda-sm80",
            "",
            "blocks=64 threads=64 cooperative",
            "  r = 0\n  repeat 4 { r = r + 1; grid.sync }",
            1.0,
        ),
    ]
}

fn main() {
    let bin = env!("CARGO_BIN_EXE_barrier-check");
    let dir = std::env::temp_dir().join("barrier-check-bench-targets");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let limit = common::bench_timeout(15.0);
    // `cargo bench -- ARGS` hands the binary ARGS and `--bench`.
    let extra: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    println!("| shape | verdict | states | time (s) | peak memory (MiB) | stop | target (s) | met |");
    println!("|---|---|---:|---:|---:|---|---:|---|");
    for (i, shape) in shapes().into_iter().enumerate() {
        let path = dir.join(format!("target-{i}.litmus"));
        std::fs::write(&path, &shape.text).expect("write");
        let cell = common::check_once(bin, &path, limit, &extra);
        let (wall, peak) = (cell.wall_s, &cell.peak_mib);
        let (states, stop, verdict) = (cell.states(), cell.stop(), cell.verdict());
        let met = if stop == "exhausted" && wall < shape.target_s {
            "yes"
        } else {
            "no"
        };
        println!(
            "| {} | {verdict} | {states} | {wall:.2} | {peak} | {stop} | < {} | {met} |",
            shape.name, shape.target_s
        );
    }
}
