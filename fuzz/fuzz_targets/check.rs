//! Fuzz target `check`: any bytes through the whole pipeline (decode,
//! parse, lower, explore with small limits, one job and two). A panic
//! anywhere (libFuzzer's panic hook aborts even on a caught one) or an
//! internal error is a finding; so is a verdict that depends on the jobs.
#![no_main]

use barrier_check::{check_bytes, CheckOptions};
use bc_explore::{Limits, Stop};
use bc_report::TestReport;
use libfuzzer_sys::fuzz_target;

fn opts(jobs: usize) -> CheckOptions {
    CheckOptions {
        limits: Limits {
            max_states: 2_000,
            max_memory: 64 << 20,
            jobs,
            ..Limits::default()
        },
        ..CheckOptions::default()
    }
}

fn assert_sound(r: &TestReport) {
    for d in &r.diagnostics {
        assert!(!d.message.starts_with("internal error"), "{}", d.message);
    }
    if let Some(o) = &r.outcome {
        assert!(o.internal_errors.is_empty(), "{:?}", o.internal_errors);
    }
}

fuzz_target!(|data: &[u8]| {
    let one = check_bytes("fuzz.litmus", data, &opts(1));
    assert_sound(&one);
    if one.outcome.as_ref().is_some_and(|o| o.stop == Stop::Exhausted) {
        let two = check_bytes("fuzz.litmus", data, &opts(2));
        assert_sound(&two);
        assert_eq!(one.verdict(), two.verdict(), "the verdict depends on the jobs");
    }
});
