//! `barrier-check explain`: one finding's witness execution as a graph, in
//! DOT (render with graphviz): one column per thread with its events in
//! program order, participates-in edges from each arrive to the waits it
//! completes, the bmo of each barrier as a dotted chain, stuck waits in red,
//! and the interleaving itself as a numbered chain whose repeating part (a
//! lasso's cycle) loops back.

use crate::TestReport;
use bc_explore::Finding;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The thread and program-order place of an event label (`T1#2 arrive B`),
/// or `None` for a launch event.
fn place(label: &str) -> Option<(&str, u32)> {
    let (thread, rest) = label.split_once('#')?;
    let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((thread, n.parse().ok()?))
}

fn quote(s: &str) -> String {
    format!(
        "\"{}\"",
        s.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
    )
}

/// The DOT graph of finding `f` of report `r`.
pub fn to_dot(r: &TestReport, f: &Finding) -> String {
    let w = &f.witness;
    let all = w
        .bmo
        .iter()
        .flat_map(|(_, ops)| ops)
        .chain(
            w.participates_in
                .iter()
                .flat_map(|(wait, ps)| std::iter::once(wait).chain(ps)),
        )
        .chain(&w.stuck)
        .chain(&w.focus);
    let mut labels: Vec<&str> = Vec::new();
    for l in all {
        if !labels.contains(&l.as_str()) {
            labels.push(l);
        }
    }
    // Events per thread, in program order; launch events apart.
    let mut threads: BTreeMap<&str, Vec<(u32, &str)>> = BTreeMap::new();
    let mut launch = Vec::new();
    for &l in &labels {
        match place(l) {
            Some((t, n)) => threads.entry(t).or_default().push((n, l)),
            None => launch.push(l),
        }
    }
    let id = |l: &str| format!("e{}", labels.iter().position(|x| *x == l).expect("a known label"));
    let mut out = String::new();
    let title = format!("{}: {}", f.kind, r.test.as_deref().unwrap_or(&r.source.name));
    let _ = writeln!(out, "digraph {} {{", quote(&title));
    let _ = writeln!(out, "  rankdir=TB; newrank=true;");
    let _ = writeln!(out, "  node [shape=box, fontname=\"monospace\"];");
    let _ = writeln!(
        out,
        "  label={}; labelloc=t;",
        quote(&format!("{title}\n{}", f.message))
    );
    if !launch.is_empty() {
        let _ = writeln!(out, "  subgraph cluster_launch {{ label=\"launch\";");
        for l in &launch {
            let _ = writeln!(out, "    {} [label={}];", id(l), quote(l));
        }
        let _ = writeln!(out, "  }}");
    }
    for (i, (t, evs)) in threads.iter_mut().enumerate() {
        evs.sort();
        let _ = writeln!(out, "  subgraph cluster_t{i} {{ label={};", quote(t));
        for (_, l) in evs.iter() {
            let stuck = w.stuck.iter().any(|s| s == l);
            let focus = w.focus.iter().any(|s| s == l);
            let style = match (stuck, focus) {
                (true, _) => ", color=red, fontcolor=red, style=bold",
                (false, true) => ", style=bold",
                _ => "",
            };
            let _ = writeln!(out, "    {} [label={}{style}];", id(l), quote(l));
        }
        for pair in evs.windows(2) {
            let _ = writeln!(out, "    {} -> {} [label=\"po\"];", id(pair[0].1), id(pair[1].1));
        }
        let _ = writeln!(out, "  }}");
    }
    for (wait, ps) in &w.participates_in {
        for p in ps {
            let _ = writeln!(
                out,
                "  {} -> {} [color=blue, label=\"participates-in\"];",
                id(p),
                id(wait)
            );
        }
    }
    for (b, ops) in &w.bmo {
        for pair in ops.windows(2) {
            let _ = writeln!(
                out,
                "  {} -> {} [style=dotted, label={}, constraint=false];",
                id(&pair[0]),
                id(&pair[1]),
                quote(&format!("bmo {b}"))
            );
        }
    }
    // The interleaving.
    if !w.steps.is_empty() {
        let _ = writeln!(
            out,
            "  subgraph cluster_steps {{ label=\"interleaving\"; node [shape=plaintext];"
        );
        for (i, s) in w.steps.iter().enumerate() {
            let line = r.source.line_col(s.span.start).line;
            let text = format!("{}. {}  {}  (line {line})\n{}", i + 1, s.thread, s.text, s.effect);
            let _ = writeln!(out, "    s{i} [label={}];", quote(&text));
        }
        for i in 1..w.steps.len() {
            let _ = writeln!(out, "    s{} -> s{i};", i - 1);
        }
        if let Some(c) = w.cycle_start {
            let _ = writeln!(
                out,
                "    s{} -> s{c} [color=red, label=\"repeats forever\"];",
                w.steps.len() - 1
            );
        }
        let _ = writeln!(out, "  }}");
    }
    let _ = writeln!(out, "}}");
    out
}
