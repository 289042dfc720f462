//! Property test: the whole pipeline (decode, parse, lower, explore) never
//! panics, whatever the bytes.

/// The allocator the shipped binary uses (`src/main.rs`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;

use barrier_check::{check_bytes, CheckOptions};
use bc_explore::{Limits, SearchOptions};
use proptest::prelude::*;

const SEED: &str = "litmus \"s\"\nmodel amdgpu\nbarrier B = 2\nbarrier C\nvar x = 0\nvar s scope=block\n\
thread T0 { join B; init C, 1; write s; r = exch x, 1; if r == 0 { arrive B, 3 } else { drop B }; wait B, r }\n\
thread T1 { join B; L: arrive B; wait B; repeat 2 { arrive_wait B }; while r < 1 { r = load x; goto L } }\n\
kernel blocks=2 threads=2 { join C; arrive_drop C; read s; await x == 1 }\n\
assert sometimes T0:r == 1\nexpect deadlock\n";

fn opts() -> CheckOptions {
    CheckOptions {
        search: SearchOptions {
            limits: Limits {
                states: 2_000,
                ..Limits::default()
            },
            ..SearchOptions::default()
        },
        ..CheckOptions::default()
    }
}

/// `check_bytes` turns a panic into an internal-error diagnostic, so
/// "never panics" means "never reports one".
fn internal(r: &bc_report::TestReport) -> bool {
    r.diagnostics.iter().any(|d| d.message.starts_with("internal error"))
        || r.outcome.as_ref().is_some_and(|o| !o.internal_errors.is_empty())
}

proptest! {
    #![proptest_config(common::proptest_config(600))]

    #[test]
    fn arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let r = check_bytes("f.litmus", &bytes, &opts());
        prop_assert!(!internal(&r), "{:?}", r.diagnostics);
    }

    #[test]
    fn mutations_of_a_valid_file(cut in 0usize..SEED.len(), junk in "[ -~\n]{0,12}", at in 0usize..SEED.len()) {
        let mut s = SEED.as_bytes()[..cut].to_vec();
        let at = at.min(s.len());
        s.splice(at..at, junk.bytes());
        let r = check_bytes("f.litmus", &s, &opts());
        prop_assert!(!internal(&r), "{:?}", r.diagnostics);
        // Either it lowered and explored, or it says why with a position.
        if r.outcome.is_none() {
            prop_assert!(!r.diagnostics.is_empty());
        }
    }
}

#[test]
fn the_seed_itself_checks() {
    let r = check_bytes("seed.litmus", SEED.as_bytes(), &opts());
    assert!(r.outcome.is_some(), "{:?}", r.diagnostics);
}
