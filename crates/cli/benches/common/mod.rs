//! What the benches share: the time limit they read from `BENCH_TIMEOUT`
//! and one check of one file by the release binary in its own process
//! (peak memory is per process), with its JSON result and peak memory.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// `BENCH_TIMEOUT` in seconds, or `default`.
pub fn bench_timeout(default: f64) -> f64 {
    std::env::var("BENCH_TIMEOUT")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(default)
}

/// One check's result.
pub struct Cell {
    /// The file's entry of `results` in the JSON report (null when none).
    pub result: serde_json::Value,
    /// Wall time of the process, in seconds.
    pub wall_s: f64,
    /// Peak memory in MiB, `?` when the report had none.
    pub peak_mib: String,
}

impl Cell {
    pub fn states(&self) -> u64 {
        self.result["stats"]["states"].as_u64().unwrap_or(0)
    }
    pub fn stop(&self) -> String {
        self.result["stop"].as_str().unwrap_or("error").to_string()
    }
    /// The verdict as a comma-separated list (`ok` when empty), in
    /// parentheses when the search stopped: a stopped search's findings
    /// are only those seen so far.
    // Every bench compiles this module; not every one prints verdicts.
    #[allow(dead_code)]
    pub fn verdict(&self) -> String {
        let v = self.result["verdict"]
            .as_array()
            .map(|v| v.iter().filter_map(|k| k.as_str()).collect::<Vec<_>>().join(", "))
            .map(|v| if v.is_empty() { "ok".to_string() } else { v })
            .unwrap_or_else(|| "error".to_string());
        if self.stop() == "exhausted" {
            v
        } else {
            format!("({v} so far)")
        }
    }
}

/// Checks `path` with the binary `bin` under a time limit of `limit`
/// seconds, passing `extra` flags.
pub fn check_once(bin: &str, path: &Path, limit: f64, extra: &[String]) -> Cell {
    let start = Instant::now();
    let out = Command::new(bin)
        .args(["check", "--format", "json", "--report-peak-memory", "--timeout"])
        .arg(limit.to_string())
        .args(extra)
        .arg(path)
        .output()
        .expect("run barrier-check");
    let wall_s = start.elapsed().as_secs_f64();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let peak_mib = String::from_utf8_lossy(&out.stderr)
        .lines()
        .find_map(|l| {
            l.strip_prefix("peak-memory-kb: ")
                .and_then(|v| v.trim().parse::<f64>().ok())
        })
        .map_or("?".to_string(), |kb| format!("{:.0}", kb / 1024.0));
    Cell {
        result: json["results"][0].clone(),
        wall_s,
        peak_mib,
    }
}
