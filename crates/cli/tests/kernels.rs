//! The compiled-kernel corpus (`kernels/*.cu`, docs/ptx.md): every file is
//! compiled by nvcc (pip's, installed by `.ci/cuda` when `BC_NVCC` is not
//! set) and checked against the `// expect` line of its header; the quiet
//! report is a snapshot. Without an nvcc that can be installed, the corpus
//! test says so loudly and skips.

mod common;
use common::*;
use std::path::PathBuf;
use std::time::Instant;

/// An nvcc: `BC_NVCC`, else the one `.ci/cuda` installs.
fn nvcc() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("BC_NVCC").map(PathBuf::from).filter(|p| p.is_file()) {
        return Some(p);
    }
    let out = std::process::Command::new("bash")
        .arg(root().join(".ci/cuda"))
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    (out.status.success() && path.is_file()).then_some(path)
}

fn kernel_files() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(root().join("kernels"))
        .expect("kernels/")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".cu"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_kernel_has_a_launch_and_an_expectation() {
    for f in kernel_files() {
        let text = std::fs::read_to_string(root().join("kernels").join(&f)).unwrap();
        assert!(
            text.contains("\n// barrier-check: "),
            "{f}: no `// barrier-check:` line"
        );
        assert!(text.contains("\n// expect "), "{f}: no `// expect` line");
    }
}

#[test]
fn the_kernel_corpus_gets_its_expected_verdicts() {
    let Some(nvcc) = nvcc() else {
        eprintln!(
            "\n*** SKIPPED: no nvcc (BC_NVCC unset and `.ci/cuda` could not install pip's nvidia-cuda-nvcc): the kernels/ corpus was NOT checked ***\n"
        );
        return;
    };
    let files: Vec<String> = kernel_files().into_iter().map(|f| format!("kernels/{f}")).collect();
    let mut args = vec!["check", "--quiet", "--no-timing"];
    args.extend(files.iter().map(String::as_str));
    let start = Instant::now();
    let out = bin()
        .args(&args)
        .current_dir(root())
        .env("BC_NVCC", &nvcc)
        .output()
        .expect("runs");
    eprintln!(
        "kernels/: {} files checked in {:.1} s",
        files.len(),
        start.elapsed().as_secs_f64()
    );
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn a_cu_file_without_nvcc_says_how_to_get_one() {
    let out = bin()
        .args(["check", "kernels/tiling-ok.cu"])
        .current_dir(root())
        .env("BC_NVCC", "/nonexistent/nvcc")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        all.contains("pip install nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-cccl"),
        "{all}"
    );
}
