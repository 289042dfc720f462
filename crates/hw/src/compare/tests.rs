//! The comparison on hand-built outcome sets (a stub of the model's, one
//! per fixture test, derived by hand from each litmus file) and on the
//! recorded observations of tests/fixtures/observed.json.

use super::*;
use crate::observed::parse_observed;

const FIXTURE: &str = include_str!("../../tests/fixtures/observed.json");

/// An outcome set from `(name, value)` finals, each reached by one execution.
fn finals(fs: &[&[(&str, i64)]]) -> Option<BTreeMap<Final, u64>> {
    Some(
        fs.iter()
            .map(|f| (final_of(f.iter().map(|(n, v)| (n.to_string(), *v))), 1))
            .collect(),
    )
}

fn allowed(fs: &[&[(&str, i64)]]) -> Allowed {
    Allowed {
        finals: finals(fs),
        complete: true,
        ..Allowed::default()
    }
}

/// What the model allows of each fixture test, with its verdict.
fn model_of(file: &str) -> (Allowed, &'static str) {
    let name = file.rsplit('/').next().unwrap().trim_end_matches(".litmus");
    match name {
        // Every thread reads the block's count of non-zero predicates: 2.
        "syncthreads-count" => (allowed(&[&[("b0t0:r", 2), ("b0t1:r", 2), ("b0t2:r", 2)]]), "ok"),
        // Both threads' predicates are 1: the count is 2 for both.
        "syncthreads-count-wrong-assumption" => (allowed(&[&[("b0t0:r", 2), ("b0t1:r", 2)]]), "assertion"),
        // No observable values; every execution terminates.
        "syncthreads-basic" | "grid-sync-cooperative" => (allowed(&[&[]]), "ok"),
        "syncthreads-one-branch-exit" => (
            Allowed {
                ub_or_race: true,
                ..allowed(&[&[]])
            },
            "ub(divergent-barrier)",
        ),
        "syncthreads-missing-race" => (
            Allowed {
                ub_or_race: true,
                ..allowed(&[&[]])
            },
            "race",
        ),
        // The third arrival always waits for a phase that never completes.
        "named-surplus-arrival-hangs" => (
            Allowed {
                deadlock: true,
                ..allowed(&[])
            },
            "deadlock",
        ),
        other => panic!("no stub for {other}"),
    }
}

fn fixture_table() -> Table {
    let record = parse_observed(FIXTURE).unwrap();
    let rows = record
        .runs
        .iter()
        .map(|run| {
            let (a, verdict) = model_of(&run.file);
            let seen = Observed::of_run(run);
            Row {
                file: run.file.clone(),
                test: run.test.clone(),
                mapping: run.mapping.clone(),
                verdict: verdict.into(),
                findings: if verdict == "ok" {
                    vec![]
                } else {
                    vec![verdict.to_string()]
                },
                comparison: compare(&a, &seen),
                allowed: Some(a),
                observed: seen,
            }
        })
        .collect();
    Table {
        device: record.device,
        iterations: record.iterations,
        rows,
    }
}

#[test]
fn the_fixture_has_each_status() {
    let t = fixture_table();
    let status: Vec<(&str, &str)> = t
        .rows
        .iter()
        .map(|r| (r.file.rsplit('/').next().unwrap(), r.comparison.status.word()))
        .collect();
    assert_eq!(
        status,
        [
            ("syncthreads-count.litmus", "sound"),
            ("syncthreads-count-wrong-assumption.litmus", "UNSOUND"),
            ("syncthreads-basic.litmus", "UNSOUND"),
            ("syncthreads-one-branch-exit.litmus", "ub"),
            ("syncthreads-missing-race.litmus", "ub"),
            ("named-surplus-arrival-hangs.litmus", "sound"),
            ("grid-sync-cooperative.litmus", "not-run"),
        ]
    );
    assert_eq!(t.exit_code(), 1);
    // The forbidden value, with its count; the hang on a test that always
    // terminates.
    let wrong = &t.rows[1].comparison;
    assert_eq!(
        wrong.forbidden,
        [(final_of([("b0t0:r".into(), 1), ("b0t1:r".into(), 2)]), 3)]
    );
    assert!(!wrong.forbidden_hang);
    assert!(t.rows[2].comparison.forbidden_hang);
    assert!(t.rows[2].comparison.forbidden.is_empty());
}

#[test]
fn unobserved_outcomes_are_listed_not_failed() {
    let a = allowed(&[&[("x", 1)], &[("x", 2)]]);
    let seen = Observed {
        iterations: 10,
        completed: 10,
        finals: finals(&[&[("x", 1)]]).unwrap(),
        ..Observed::default()
    };
    let c = compare(&a, &seen);
    assert_eq!(c.status, Status::Sound);
    assert_eq!(c.unobserved, [(vec![("x".to_string(), 2)], 1)]);
}

#[test]
fn a_hang_is_allowed_by_deadlock_or_nontermination_only() {
    let seen = Observed {
        iterations: 10,
        completed: 3,
        hung: true,
        finals: finals(&[&[("x", 1)]]).unwrap(),
        ..Observed::default()
    };
    let ok = allowed(&[&[("x", 1)]]);
    assert_eq!(compare(&ok, &seen).status, Status::Unsound);
    for a in [
        Allowed {
            deadlock: true,
            ..ok.clone()
        },
        Allowed {
            nontermination: true,
            ..ok.clone()
        },
    ] {
        assert_eq!(compare(&a, &seen).status, Status::Sound);
    }
    // Undefined behaviour: whatever happened, shown and never failed.
    let ub = Allowed { ub_or_race: true, ..ok };
    assert_eq!(compare(&ub, &seen).status, Status::Ub);
}

#[test]
fn without_a_complete_outcome_set_nothing_is_forbidden_by_it() {
    let seen = Observed {
        iterations: 10,
        completed: 10,
        hung: false,
        finals: finals(&[&[("x", 7)]]).unwrap(),
        ..Observed::default()
    };
    // The outcome set is not known: only a hang could contradict.
    let unknown = Allowed {
        finals: None,
        complete: true,
        ..Allowed::default()
    };
    assert!(matches!(compare(&unknown, &seen).status, Status::Unknown(_)));
    let hung = Observed {
        hung: true,
        ..seen.clone()
    };
    assert_eq!(compare(&unknown, &hung).status, Status::Unsound);
    // A stopped search may have missed outcomes and hangs alike.
    let stopped = Allowed {
        complete: false,
        ..allowed(&[&[("x", 1)]])
    };
    assert!(matches!(compare(&stopped, &hung).status, Status::Unknown(_)));
}

#[test]
fn other_value_names_are_an_error_not_a_verdict() {
    let a = allowed(&[&[("b0t0:r", 1)]]);
    let seen = Observed {
        iterations: 1,
        completed: 1,
        finals: finals(&[&[("T0:r", 1)]]).unwrap(),
        ..Observed::default()
    };
    let c = compare(&a, &seen);
    assert!(
        matches!(&c.status, Status::Error(w) if w.contains("T0:r") && w.contains("b0t0:r")),
        "{c:?}"
    );
    let t = Table {
        device: "d".into(),
        iterations: 1,
        rows: vec![Row {
            file: "f".into(),
            test: "t".into(),
            mapping: None,
            verdict: "ok".into(),
            findings: vec![],
            allowed: Some(a),
            observed: seen,
            comparison: c,
        }],
    };
    assert_eq!(t.exit_code(), 2);
}

#[test]
fn a_harness_that_never_ran_is_not_run() {
    let seen = Observed {
        iterations: 10,
        cuda_error: Some("cudaErrorCooperativeLaunchTooLarge\nmore".into()),
        ..Observed::default()
    };
    assert_eq!(
        compare(&allowed(&[&[]]), &seen).status,
        Status::NotRun("cudaErrorCooperativeLaunchTooLarge".into())
    );
}

#[test]
fn a_run_its_deadline_cut_short_is_not_run_even_when_it_looks_hung() {
    // Killed by the run's deadline mid-iteration: no hang, no outcome counts,
    // even on a test whose every execution terminates.
    let seen = Observed {
        iterations: 10,
        completed: 4,
        hung: true,
        finals: finals(&[&[("x", 9)]]).unwrap(),
        not_run: Some("stopped by the run's deadline after 1200 ms".into()),
        ..Observed::default()
    };
    let c = compare(&allowed(&[&[("x", 1)]]), &seen);
    assert_eq!(
        c.status,
        Status::NotRun("stopped by the run's deadline after 1200 ms".into())
    );
    assert!(!c.forbidden_hang && c.forbidden.is_empty());
}

#[test]
fn sanitizer_findings_stand_beside_the_model_s() {
    let race = vec!["race".to_string()];
    let seen = |n| {
        Some(ToolSeen {
            errors: Some(n),
            ..ToolSeen::default()
        })
    };
    assert_eq!(side_by_side("racecheck", &race, seen(2).as_ref()), "both");
    assert_eq!(side_by_side("racecheck", &race, seen(0).as_ref()), "model only");
    assert_eq!(side_by_side("synccheck", &race, seen(1).as_ref()), "tool only");
    assert_eq!(side_by_side("synccheck", &[], seen(0).as_ref()), "neither");
    assert_eq!(side_by_side("synccheck", &[], None), "-");
    let div = vec!["ub(divergent-barrier)".to_string()];
    assert_eq!(side_by_side("synccheck", &div, seen(2).as_ref()), "both");
    // synccheck's `Missing init` and `Missing wait` are the model's
    // uninitialized barrier and arrive-before-wait.
    for f in ["ub(uninitialized-barrier)", "ub(arrive-before-wait)"] {
        assert_eq!(side_by_side("synccheck", &[f.to_string()], seen(1).as_ref()), "both");
    }
}

#[test]
fn renderings_of_the_fixture() {
    let t = fixture_table();
    insta::assert_snapshot!("text", text(&t));
    insta::assert_snapshot!("markdown", markdown(&t));
    let json: serde_json::Value = serde_json::from_str(&to_json(&t)).unwrap();
    assert_eq!(json["summary"]["UNSOUND"], 2);
    assert_eq!(json["tests"][1]["forbidden"][0]["values"]["b0t0:r"], 1);
    assert_eq!(json["tests"][1]["forbidden"][0]["count"], 3);
    assert_eq!(json["tests"][0]["unobserved"].as_array().unwrap().len(), 0);
    assert_eq!(json["tests"][3]["sanitizer"]["synccheck_side"], "both");
    assert_eq!(json["tests"][4]["sanitizer"]["racecheck_side"], "model only");
}

/// A record's counts must add up, with checked arithmetic, to the
/// iterations it completed, at most those asked, and it must name the
/// litmus test; every run of the recorded fixture does.
#[test]
fn an_impossible_record_is_an_inconsistency() {
    let record = parse_observed(FIXTURE).unwrap();
    for run in &record.runs {
        assert_eq!(inconsistency(run, Some(&run.test)), None, "{}", run.file);
    }
    let ok = &record.runs[0];
    assert!(ok.completed > 0 && ok.outcomes.len() == 1);
    let with = |f: &dyn Fn(&mut observed::Run)| {
        let mut r = ok.clone();
        f(&mut r);
        inconsistency(&r, Some(&ok.test)).unwrap_or_default()
    };
    assert!(with(&|r| r.completed = r.iterations + 1).contains("completed 1001 of 1000"));
    assert!(with(&|r| {
        r.outcomes.clear();
        r.iterations = 10;
        r.completed = 10;
    })
    .contains("add up to 0, not the 10 completed"));
    // Two counts whose sum wraps past 2^64 onto `completed`.
    assert!(with(&|r| {
        let mut twice = r.outcomes[0].clone();
        twice.count = u64::MAX;
        r.outcomes.push(twice);
        r.outcomes[0].count = r.completed + 1;
    })
    .contains("more than 2^64"));
    assert!(with(&|r| r.test = "another".into()).contains("`another`"));
    // A litmus file that did not parse has no name to hold it to.
    let mut other = ok.clone();
    other.test = "another".into();
    assert_eq!(inconsistency(&other, None), None);
    // The view of such a record saturates instead of overflowing.
    let mut wrapped = ok.clone();
    wrapped.outcomes.push(wrapped.outcomes[0].clone());
    wrapped.outcomes[1].count = u64::MAX;
    assert_eq!(Observed::of_run(&wrapped).finals.values().next(), Some(&u64::MAX));
}
