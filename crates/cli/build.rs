//! Build script: the git commit the binary is built from, for `--version`
//! (`barrier-check 0.1.0 (61e7eb3)`), or `unknown` outside a git checkout.
//! Reports (SARIF's tool version) keep the package version alone, so
//! their output does not change with every commit.

use std::process::Command;

fn main() {
    let hash = Command::new("git")
        .args(["rev-parse", "--short=7", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".into());
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .is_some_and(|o| !o.stdout.is_empty());
    let suffix = if dirty && hash != "unknown" { "-modified" } else { "" };
    println!("cargo:rustc-env=BC_GIT_HASH={hash}{suffix}");
    // Rebuild when HEAD moves (a commit, a checkout) or the index changes;
    // only paths that exist (a missing one would rerun this every build:
    // in a git worktree `.git` is a file, and the hash may then lag).
    println!("cargo:rerun-if-changed=build.rs");
    let mut watch = vec!["../../.git/HEAD".to_string(), "../../.git/index".to_string()];
    if let Ok(head) = std::fs::read_to_string("../../.git/HEAD") {
        if let Some(r) = head.strip_prefix("ref: ") {
            watch.push(format!("../../.git/{}", r.trim()));
        }
    }
    for path in watch.iter().filter(|p| std::path::Path::new(p).is_file()) {
        println!("cargo:rerun-if-changed={path}");
    }
}
