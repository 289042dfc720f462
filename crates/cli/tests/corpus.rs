//! The corpus as data-driven tests: one test per `litmus/**/*.litmus` file.
//! Each must reach its `expect`ed verdict with the search exhausted, the
//! rule checker must find every execution the explorer built structurally
//! valid, and the explorer's operational findings must agree with the rule
//! checker's on the kinds both judge. Each reduction switched off, and 3
//! jobs against 1, leave the verdict and the outcome set (`--outcomes`:
//! values and counts) alone.

/// The allocator the shipped binary uses (`src/main.rs`): with glibc's,
/// allocation was a quarter of these searches' time (perf).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use barrier_check::{check_bytes, CheckOptions};
use bc_syntax::{FindingKind, UbKind};
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};

/// Kinds both the explorer and the rule checker decide (the offending
/// operations of privileged-barrier, uncooperative-grid-sync and
/// invalid-barrier have no effect, and leave a `NoEffect` event for the
/// rule checker; `mbarrier.inval` leaves an `Inval` event).
const SHARED: &[FindingKind] = &[
    FindingKind::Deadlock,
    FindingKind::Ub(UbKind::UninitializedBarrier),
    FindingKind::Ub(UbKind::DropWithoutJoin),
    FindingKind::Ub(UbKind::NegativeExpectedCount),
    FindingKind::Ub(UbKind::WaitWithoutJoin),
    FindingKind::Ub(UbKind::ExpectedCountTooSmall),
    FindingKind::Ub(UbKind::CountMismatch),
    FindingKind::Ub(UbKind::ArriveTwice),
    FindingKind::Ub(UbKind::CopyNotWaited),
    // phase-with on the AMDGPU models, token-phase on the CUDA ones (no
    // model has both), each decided by both sides.
    FindingKind::Ub(UbKind::StalePhase),
    FindingKind::Ub(UbKind::ArriveThenDrop),
    FindingKind::Ub(UbKind::CountOverflow),
    FindingKind::Ub(UbKind::DivergentBarrier),
    FindingKind::Ub(UbKind::ArriveBeforeWait),
    FindingKind::Ub(UbKind::PrivilegedBarrier),
    FindingKind::Ub(UbKind::UncooperativeGridSync),
    // Compared one-sided below.
    FindingKind::Ub(UbKind::InvalidBarrier),
    FindingKind::Race,
];

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("corpus dir")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|e| e == "litmus") {
            out.push(p);
        }
    }
}

fn run(path: &Path, root: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path).map_err(|e| format!("{e}"))?;
    let name = path.strip_prefix(root).unwrap_or(path).display().to_string();
    // Outcome sets are collected on every run here, to compare them.
    let base = CheckOptions {
        search: bc_explore::SearchOptions {
            outcomes: true,
            ..Default::default()
        },
        ..CheckOptions::default()
    };
    let r = check_bytes(&name, &bytes, &base);
    let Some(o) = &r.outcome else {
        return Err(bc_report::diagnostic::render_all(&r.source, &r.diagnostics).into());
    };
    if r.expected.is_none() {
        return Err("every corpus file must carry an `expect` line".into());
    }
    if !o.internal_errors.is_empty() {
        return Err(format!("rule checker rejected an explored execution: {:?}", o.internal_errors).into());
    }
    // `ub(stale-phase)` under token-phase (the CUDA models): the rule
    // checker sees a stale token only where executes-before fixes it
    // (`token.rs`), the explorer in every interleaving (a token kept while
    // memory synchronization lets another thread run the barrier on,
    // `cuda/cuda-barrier-stale-token.litmus`), so there the checker's
    // findings are a subset of the explorer's.
    let stale = FindingKind::Ub(UbKind::StalePhase);
    let model = r.model.as_deref().and_then(|m| bc_models::lookup(m).ok());
    let has = |rule| model.as_ref().is_some_and(|m| m.rules.has(rule));
    let token_phase = has(bc_models::Rule::TokenPhase);
    // `ub(invalid-barrier)`: likewise, the rule checker sees a use after
    // an inval only where executes-before orders the inval before the use
    // and every init of the barrier outside them (`usage.rs`), the
    // explorer in every interleaving (an inval and a use by two threads
    // that no barrier orders), so the checker's findings are a subset.
    let invalid = FindingKind::Ub(UbKind::InvalidBarrier);
    // `ub(arrive-before-wait)` (a wait of another thread that observed the
    // phase before the reuse, perhaps ordered only by a flag) and, under
    // wait-after-init, `ub(uninitialized-barrier)` (a wait that every init
    // executes after) likewise: the checker reports only what the
    // execution fixes.
    let abw = FindingKind::Ub(UbKind::ArriveBeforeWait);
    let uninit = FindingKind::Ub(UbKind::UninitializedBarrier);
    let wait_init = has(bc_models::Rule::WaitAfterInit);
    let one_sided =
        |k: &FindingKind| *k == invalid || *k == abw || (token_phase && *k == stale) || (wait_init && *k == uninit);
    let shared = |k: &&FindingKind| SHARED.contains(k) && !one_sided(k);
    let agree = |o: &bc_explore::Outcome| -> Result<(), Failed> {
        let op: Vec<_> = o.operational.iter().filter(shared).collect();
        let judged: Vec<_> = o.judged.iter().filter(shared).collect();
        if op != judged {
            return Err(format!("explorer saw {op:?} but the rule checker judged {judged:?}").into());
        }
        for k in o.judged.iter().filter(|k| one_sided(k)) {
            if !o.operational.contains(k) {
                return Err(format!("the rule checker judged {k} where the explorer did not").into());
            }
        }
        Ok(())
    };
    agree(o)?;
    // One execution for all (`Reductions::det`, docs/explorer.md, item
    // 10): without outcome sets, a deterministic program is decided on
    // one execution; its verdict is the search's, the rule checker
    // accepts it, and explorer and rule checker agree on it.
    let plain = CheckOptions {
        search: bc_explore::SearchOptions {
            // A one run of a corpus file takes far fewer steps; a program
            // it leaves to the search is searched above (the limits keep
            // that second search cheap: its verdict is compared only when
            // it finishes).
            limits: bc_explore::Limits {
                memory: 40 << 20,
                states: 5_000,
                ..Default::default()
            },
            ..Default::default()
        },
        ..CheckOptions::default()
    };
    let Some(d) = check_bytes(&name, &bytes, &plain).outcome else {
        return Err("no outcome without outcome sets".into());
    };
    if !d.internal_errors.is_empty() {
        return Err(format!("rule checker rejected the one run: {:?}", d.internal_errors).into());
    }
    if d.stop == bc_explore::Stop::Exhausted && o.stop == bc_explore::Stop::Exhausted && d.verdict() != o.verdict() {
        return Err(format!("the one run gives {:?}, the search {:?}", d.verdict(), o.verdict()).into());
    }
    agree(&d)?;
    // Each reduction must leave the verdict alone: history compaction,
    // phase-order canonicalization, symmetry, completed-wait fusion and
    // partial-order reduction and chains, each switched off alone and all
    // together.
    for (compact, canonical, symmetry, fuse, por, chain) in [
        (false, true, true, true, true, true),
        (true, false, true, true, true, true),
        (true, true, false, true, true, true),
        (true, true, true, false, true, true),
        (true, true, true, true, false, true),
        (true, true, true, true, true, false),
        (false, false, false, false, false, false),
    ] {
        let search = bc_explore::SearchOptions {
            reductions: bc_explore::Reductions {
                compact,
                canonical,
                symmetry,
                fuse,
                por,
                chain,
                // Outcome sets are collected here, which the one run
                // leaves to the search (compared above, without them).
                det: false,
            },
            // Bounds the test's time: without reductions a few files
            // stop at this budget (their verdicts are not compared).
            limits: bc_explore::Limits {
                memory: 40 << 20,
                ..Default::default()
            },
            verify_encoding: true,
            outcomes: true,
            ..Default::default()
        };
        let opts = CheckOptions {
            search,
            ..CheckOptions::default()
        };
        let checked = check_bytes(&name, &bytes, &opts);
        // An internal error (a panic caught, a self-check that failed) is a
        // failure here too, not a skipped comparison.
        let Some(f) = checked.outcome else {
            return Err(format!(
                "compact={compact} canonical={canonical} symmetry={symmetry} fuse={fuse} por={por} chain={chain}: no outcome\n{}",
                bc_report::diagnostic::render_all(&checked.source, &checked.diagnostics)
            )
            .into());
        };
        {
            if f.stop == bc_explore::Stop::Exhausted && f.verdict() != o.verdict() {
                return Err(format!(
                    "compact={compact} canonical={canonical} symmetry={symmetry} fuse={fuse} por={por} chain={chain} gives {:?}, the default {:?}",
                    f.verdict(),
                    o.verdict()
                )
                .into());
            }
            if f.stop == bc_explore::Stop::Exhausted
                && o.stop == bc_explore::Stop::Exhausted
                && f.outcomes != o.outcomes
            {
                return Err(format!(
                    "compact={compact} canonical={canonical} symmetry={symmetry} fuse={fuse} por={por} chain={chain} gives outcomes {:?}, the default {:?}",
                    f.outcomes, o.outcomes
                )
                .into());
            }
        }
    }
    // Parallel exploration changes nothing: the same findings (messages
    // and witnesses), state and execution counts, outcome set, and stop.
    let parallel = CheckOptions {
        search: bc_explore::SearchOptions {
            jobs: 3,
            outcomes: true,
            ..Default::default()
        },
        ..CheckOptions::default()
    };
    if let Some(p) = check_bytes(&name, &bytes, &parallel).outcome {
        let same = p.findings == o.findings
            && (p.stats.states, p.stats.executions) == (o.stats.states, o.stats.executions)
            && p.outcomes == o.outcomes
            && p.stop == o.stop;
        if !same {
            return Err(format!(
                "3 jobs give {:?} / {:?} / {:?}, 1 job {:?} / {:?} / {:?}",
                p.findings, p.stats, p.outcomes, o.findings, o.stats, o.outcomes
            )
            .into());
        }
    }
    if !r.pass() {
        let text = bc_report::text::test(
            &r,
            &bc_report::text::TextOptions {
                witnesses: true,
                timing: false,
                color: false,
            },
        );
        return Err(text.into());
    }
    Ok(())
}

/// Every instruction of every built-in model is used by some corpus file
/// of that model.
fn instructions_covered(paths: &[PathBuf]) -> Result<(), Failed> {
    let files: Vec<String> = paths
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap_or_default())
        .collect();
    let mut missing = Vec::new();
    // A variant's instructions are its base's, covered under the base.
    for m in bc_models::builtin().iter().filter(|m| m.base.is_none()) {
        let header = format!("model {}\n", m.name);
        let uses = |ins: &str| {
            files.iter().filter(|f| f.contains(&header)).any(|f| {
                f.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                    .any(|w| w == ins)
            })
        };
        for i in &m.instructions {
            if !uses(&i.name) {
                missing.push(format!("{}: {}", m.name, i.name));
            }
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("instructions no corpus test uses: {missing:?}").into())
    }
}

/// Every progress model has at least three tests in `litmus/progress/`
/// whose verdict another progress model changes.
fn progress_models_differ(paths: &[PathBuf]) -> Result<(), Failed> {
    const MODELS: &[&str] = &[
        "unfair",
        "fair",
        "hsa",
        "obe",
        "lobe",
        "hsa-obe",
        "unfair-strong",
        "fair-strong",
        "hsa-strong",
        "obe-strong",
        "lobe-strong",
        "hsa-obe-strong",
        "cuda",
    ];
    let mut count: std::collections::BTreeMap<&str, usize> = MODELS.iter().map(|m| (*m, 0)).collect();
    for p in paths
        .iter()
        .filter(|p| p.components().any(|c| c.as_os_str() == "progress"))
    {
        let bytes = std::fs::read(p).map_err(|e| e.to_string())?;
        let base = check_bytes("f", &bytes, &CheckOptions::default());
        let Some(o) = &base.outcome else { continue };
        let text = String::from_utf8_lossy(&bytes);
        let own = text
            .lines()
            .find_map(|l| l.strip_prefix("progress "))
            .map(str::trim)
            .unwrap_or("cuda");
        let differs = MODELS.iter().filter(|m| **m != own).any(|m| {
            let opts = CheckOptions {
                progress: barrier_check::ProgressChoice::Named(
                    bc_models::ProgressModel::parse(m).expect("a known progress model"),
                ),
                ..CheckOptions::default()
            };
            check_bytes("f", &bytes, &opts)
                .outcome
                .is_some_and(|x| x.verdict() != o.verdict())
        });
        if differs {
            if let Some(c) = count.get_mut(own) {
                *c += 1;
            }
        }
    }
    let short: Vec<String> = count
        .iter()
        .filter(|(_, &c)| c < 3)
        .map(|(m, c)| format!("{m}: {c}"))
        .collect();
    if short.is_empty() {
        Ok(())
    } else {
        Err(format!("progress models with fewer than three distinguishing tests: {short:?}").into())
    }
}

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../litmus");
    let mut paths = Vec::new();
    files(&root, &mut paths);
    assert!(paths.len() >= 40, "the corpus has {} files", paths.len());
    let mut trials: Vec<Trial> = Vec::new();
    {
        let paths = paths.clone();
        let for_progress = paths.clone();
        trials.push(Trial::test(
            "every progress model has three distinguishing tests",
            move || progress_models_differ(&for_progress),
        ));
        trials.push(Trial::test(
            "every model instruction appears in the corpus",
            move || instructions_covered(&paths),
        ));
    }
    trials.extend(paths.into_iter().map(|p| {
        let name = p.strip_prefix(&root).unwrap_or(&p).display().to_string();
        let root = root.clone();
        Trial::test(name, move || run(&p, &root))
    }));
    libtest_mimic::run(&args, trials).exit();
}
