//! Witnesses agree with themselves (issue 38, point 2): over the whole
//! corpus, with history compaction on and off, every event a witness names
//! in `bmo`, `participates_in`, `stuck` and `focus` is named as the README
//! defines it (`T#n`: the n-th event of thread `T` from its start), which
//! the steps' `events` ids say, and the finding's message names them
//! alike; one id names one event; phases count from the launch (each
//! barrier's completed phases go up along the steps); and nothing internal
//! ("earlier phases forgotten") is printed.

mod common;

use common::{run_in_corpus, stderr};
use serde_json::Value;
use std::collections::BTreeMap;

/// The id (`T#n`) and the rest (the statement, or what an implicit event
/// did) of an event label (`T#n text`); `None` for a launch event.
fn split(label: &str) -> Option<(&str, &str)> {
    let (id, text) = label.split_once(' ')?;
    let (thread, n) = id.split_once('#')?;
    (!thread.is_empty() && n.parse::<u32>().is_ok_and(|n| n >= 1)).then_some((id, text))
}

/// Whether an event label names an event no step shows as its own: a join
/// at launch or a drop at a thread's end.
fn implicit(text: &str) -> bool {
    text.ends_with("(at launch)") || text.ends_with("(at wave end)") || text.ends_with("(at thread exit)")
}

/// The `B: completes phase N` of a step's effect, as (B, N).
fn completions(effect: &str) -> Vec<(String, u64)> {
    let mark = ": completes phase ";
    let mut found = Vec::new();
    let mut rest = effect;
    while let Some(at) = rest.find(mark) {
        // `B: completes`, or `(B: completes` inside a step's effect.
        let barrier = rest[..at].rsplit(' ').next().unwrap_or("").trim_start_matches('(');
        let digits: String = rest[at + mark.len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if let Ok(n) = digits.parse() {
            found.push((barrier.to_string(), n));
        }
        rest = &rest[at + mark.len()..];
    }
    found
}

/// The inconsistencies of one finding's witness and message, each a line.
fn check_finding(f: &Value) -> Vec<String> {
    let w = &f["witness"];
    let mut errors = Vec::new();
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect()
    };
    // The steps' events: id -> (the step's thread, its statement).
    let mut by_id: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut last: BTreeMap<String, u32> = BTreeMap::new();
    for step in w["steps"].as_array().unwrap() {
        let thread = step["thread"].as_str().unwrap().to_string();
        let statement = step["statement"].as_str().unwrap().to_string();
        for id in strings(&step["events"]) {
            let Some((t, n)) = id.split_once('#') else {
                errors.push(format!("step event id `{id}` is not `T#n`"));
                continue;
            };
            let n: u32 = n.parse().unwrap();
            if last.get(t).is_some_and(|&m| m >= n) {
                errors.push(format!("`{id}` follows `{t}#{}` in the steps", last[t]));
            }
            last.insert(t.to_string(), n);
            if by_id.insert(id.clone(), (thread.clone(), statement.clone())).is_some() {
                errors.push(format!("two steps add `{id}`"));
            }
        }
    }
    let stuck = strings(&w["stuck"]);
    let mut labels: Vec<String> = w["bmo"].as_object().unwrap().values().flat_map(&strings).collect();
    for p in w["participates_in"].as_array().unwrap() {
        labels.push(p["wait"].as_str().unwrap().to_string());
        labels.extend(strings(&p["participants"]));
    }
    labels.extend(stuck.iter().cloned());
    labels.extend(strings(&w["focus"]));
    let mut texts: BTreeMap<&str, &str> = BTreeMap::new();
    for label in &labels {
        if label.contains("forgotten") {
            errors.push(format!("internal state printed: `{label}`"));
        }
        let Some((id, text)) = split(label) else { continue };
        if let Some(other) = texts.insert(id, text) {
            if other != text {
                errors.push(format!("`{id}` names two events: `{other}` and `{text}`"));
            }
        }
        if implicit(text) {
            continue;
        }
        let thread = id.split_once('#').unwrap().0;
        match by_id.get(id) {
            _ if stuck.contains(label) => {
                if by_id.contains_key(id) {
                    errors.push(format!("stuck wait `{label}` is an event of a step"));
                }
            }
            None => errors.push(format!("`{label}` is the event of no step")),
            Some((t, statement)) if t == thread && statement != text => {
                errors.push(format!("`{label}` is added by a step of `{statement}`"))
            }
            Some(_) => {}
        }
    }
    // The message names events as the witness does: each `T#n` in it is
    // followed by that event's text.
    let message = f["message"].as_str().unwrap();
    for (at, _) in message.match_indices('#') {
        let start = message[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .map_or(0, |i| i + 1);
        let digits = message[at + 1..].chars().take_while(char::is_ascii_digit).count();
        if start == at || digits == 0 {
            continue;
        }
        let id = &message[start..at + 1 + digits];
        let rest = message[at + 1 + digits..].trim_start();
        let text = texts.get(id).copied().or_else(|| {
            by_id
                .get(id)
                .filter(|(t, _)| id.starts_with(&format!("{t}#")))
                .map(|(_, statement)| statement.as_str())
        });
        match text {
            None => errors.push(format!("the message names `{id}`, which the witness does not")),
            Some(text) if !rest.starts_with(text) => {
                errors.push(format!("the message names `{id} {rest}`, the witness `{id} {text}`"))
            }
            Some(_) => {}
        }
    }
    // Phases count from the launch: a barrier's completed phases go up
    // along the steps (an init may start it again).
    let mut completed: BTreeMap<String, u64> = BTreeMap::new();
    for step in w["steps"].as_array().unwrap() {
        let effect = step["effect"].as_str().unwrap();
        let statement = step["statement"].as_str().unwrap();
        if statement.contains("init") || statement.contains("inval") {
            if let Some((barrier, _)) = effect.split_once(": ") {
                completed.remove(barrier);
            }
        }
        for (barrier, n) in completions(effect) {
            if let Some(&m) = completed.get(&barrier) {
                if n <= m {
                    errors.push(format!("{barrier} completes phase {n} after phase {m}"));
                }
            }
            completed.insert(barrier, n);
        }
    }
    errors
}

/// Loops and pipelines whose history compaction forgets, and whose search
/// without compaction stays small.
const LOOPS: &[&str] = &[
    "cuda/mbarrier-warp-pipeline-producer-parity0-deadlock.litmus",
    "cuda/mbarrier-warp-pipeline-missing-release-deadlock.litmus",
    "cuda/mbarrier-warp-pipeline-wrong-stage-release.litmus",
    "cuda/mbarrier-warp-pipeline-read-before-wait-race.litmus",
    "cuda/cuda-barrier-token-twice-after-rounds.litmus",
    "cuda/syncthreads-early-exit-second-phase.litmus",
    "cuda/mbarrier-token-of-abandoned-phase-deadlock.litmus",
    "cuda/cuda-barrier-token-of-abandoned-phase-deadlock.litmus",
    "cuda/barrier-array-ring-wrong-stage.litmus",
    "cuda/sm90-mbarrier-pipeline-cutlass-producer-parity0.litmus",
    "cuda/sm90-mbarrier-pipeline-cutlass-consumer-parity1.litmus",
    "cuda/sm90-cp-async-bulk-read-before-wait.litmus",
    "cuda/cp-async-mbarrier-arrive-noinc-miscount.litmus",
    "cuda/sm90-cg-cluster-sync-between-arrive-and-wait.litmus",
    "amdgpu/stale-phase.litmus",
];

/// The inconsistencies of every finding in the JSON report of `paths`
/// (in the corpus) checked with `flags`.
fn inconsistencies(paths: &[&str], flags: &[&str]) -> Vec<String> {
    let mut args = vec!["check", "--format", "json"];
    args.extend_from_slice(flags);
    args.extend_from_slice(paths);
    let o = run_in_corpus(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut errors = Vec::new();
    let mut witnesses = 0;
    for r in doc["results"].as_array().unwrap() {
        for f in r["findings"].as_array().unwrap() {
            witnesses += 1;
            for e in check_finding(f) {
                errors.push(format!("{} {}: {e}", r["file"], f["kind"]));
            }
        }
    }
    assert!(witnesses >= paths.len(), "every file has a witness ({witnesses})");
    errors
}

#[test]
fn witnesses_name_events_from_the_thread_start_with_compaction() {
    let errors = inconsistencies(&["."], &[]);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn witnesses_name_events_from_the_thread_start_without_compaction() {
    for flags in [&["--no-compact"][..], &["--no-symmetry"], &[]] {
        let errors = inconsistencies(LOOPS, flags);
        assert!(errors.is_empty(), "{flags:?}:\n{}", errors.join("\n"));
    }
}

#[test]
fn the_pipeline_witness_is_the_same_with_and_without_compaction() {
    // The example: a producer starting at parity 0 hangs; its
    // witness names each event once and prints no internal state.
    let file = "cuda/mbarrier-warp-pipeline-producer-parity0-deadlock.litmus";
    let with = run_in_corpus(&["check", "--format", "json", file]);
    let without = run_in_corpus(&["check", "--format", "json", "--no-compact", file]);
    let witness = |o: &std::process::Output| {
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        doc["results"][0]["findings"][0]["witness"].clone()
    };
    assert_eq!(witness(&with), witness(&without));
    let explain = run_in_corpus(&["explain", file]);
    let text = String::from_utf8_lossy(&explain.stdout);
    assert!(
        text.contains("never completes: b0t1#3 mbarrier.try_wait.parity empty0, ph"),
        "{text}"
    );
    assert!(!text.contains("forgotten"), "{text}");
    let dot = run_in_corpus(&["explain", "--format", "dot", file]);
    let dot = String::from_utf8_lossy(&dot.stdout);
    assert!(dot.contains("b0t1#3 mbarrier.try_wait.parity empty0, ph"), "{dot}");
    assert!(!dot.contains("forgotten"), "{dot}");
}

/// A warp that arrives as one (docs/semantics.md, "A warp arrives as
/// one") is one witness step, named after its lanes, with every lane's
/// event (issue 38, point 2), with compaction on and off.
#[test]
fn a_warp_arrival_is_one_witness_step() {
    let file = "cuda/ptx-barrier-aligned-warp-arrives-twice.litmus";
    for flags in [&[][..], &["--no-compact"][..]] {
        let out = run_in_corpus(&[&["check", "--format", "json", file][..], flags].concat());
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let steps = doc["results"][0]["findings"][0]["witness"]["steps"]
            .as_array()
            .unwrap()
            .clone();
        let shown: Vec<(String, usize, String)> = steps
            .iter()
            .map(|s| {
                (
                    s["thread"].as_str().unwrap().to_string(),
                    s["events"].as_array().unwrap().len(),
                    s["effect"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(
            shown,
            vec![
                ("b0t0..b0t31".into(), 32, "bar1(1): 32 of 96 arrived (phase 0)".into()),
                ("b0t0..b0t31".into(), 32, "bar1(1): 64 of 96 arrived (phase 0)".into()),
            ],
            "{flags:?}"
        );
        assert_eq!(steps[0]["events"][31], "b0t31#1");
    }
}
