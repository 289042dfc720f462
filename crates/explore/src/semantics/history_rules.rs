//! The rules the explorer judges over a whole history rather than one
//! operation: phase-with, arrive-then-drop and race
//! ([`System::history_rules`], over executes-before,
//! `analysis/history.rs`). They judge a state where the rule checker
//! judges its execution (end states, stopped searches, and before
//! compaction forgets), after it, and only mark their kinds as seen
//! operationally (`rules.rs`, module doc).

use crate::analysis::history::{ExecutesBefore, HistoryFindings, LazyEb};
use crate::semantics::System;
use crate::state::{HEvent, HKind, State, LAUNCH};
use bc_graph::*;
use bc_models::Rule;
use bc_syntax::FindingKind;
use rustc_hash::FxHashMap as HashMap;

impl System<'_> {
    /// The rules the explorer judges over a whole history, where the rule
    /// checker judges an execution (`judge` in `record.rs`: at end states,
    /// stopped searches, and before compaction forgets): the findings of
    /// those `s` breaks that the model judges.
    pub(crate) fn history_rules(&self, s: &State, ident: &[u32]) -> HistoryFindings {
        // Computed at the first question: a history with one phase per
        // barrier and no plain accesses asks none (a block of a thousand
        // threads after compaction).
        let eb = LazyEb::new(s);
        let mut out = Vec::new();
        let rules = self.p.model.rules;
        for (rule, msg) in [
            (Rule::PhaseWith, self.phase_with(s, &eb, ident)),
            (Rule::ArriveThenDrop, self.arrive_then_drop(s, &eb, ident)),
        ] {
            if let (true, Some(msg), Some(kind)) = (rules.has(rule), msg, rule.finding()) {
                out.push((kind, msg));
            }
        }
        if let Some(msg) = self.race(s, &eb, ident) {
            out.push((FindingKind::Race, msg));
        }
        out
    }

    /// The waits each of `events` participates in, by participant (only
    /// those: every participant of a phase of T threads would be T^2
    /// entries).
    fn waits_of(s: &State, events: &[(u32, u32)]) -> HashMap<(u32, u32), Vec<(u32, u32)>> {
        let mut out: HashMap<(u32, u32), Vec<(u32, u32)>> = events.iter().map(|&a| (a, Vec::new())).collect();
        for (t, h) in s.hist.iter().enumerate() {
            for (po, ev) in h.iter().enumerate() {
                if let HKind::Wait { participants, .. } = &ev.kind {
                    for x in participants.iter() {
                        if let Some(ws) = out.get_mut(x) {
                            ws.push((t as u32, po as u32));
                        }
                    }
                }
            }
        }
        out
    }

    /// phase-with ("Execution Model", barrier-phase-with): between an
    /// operation A that participates in a wait W and W itself, in
    /// executes-before, lies no operation X on W's barrier that is linked
    /// by participates-in (either way, transitively) to some operation
    /// while not to W: such an X belongs to another phase. The message for
    /// the first such A, X and W of `s`. Compaction keeps a barrier's
    /// completed phases while an operation of its open phase executes
    /// before one of its completed waits, so a forgotten X cannot lie
    /// between a kept participant and its wait.
    pub(crate) fn phase_with(&self, s: &State, eb: &LazyEb, ident: &[u32]) -> Option<String> {
        // The phase-with classes, by union-find over event indices (a
        // launch participant has no index and links nothing).
        let n = eb.len();
        let mut parent: Vec<usize> = (0..n).collect();
        fn root(p: &mut [usize], mut x: usize) -> usize {
            while p[x] != x {
                p[x] = p[p[x]];
                x = p[x];
            }
            x
        }
        let waits: Vec<(u32, u32)> = (0..s.hist.len())
            .flat_map(|t| (0..s.hist[t].len()).map(move |po| (t as u32, po as u32)))
            .filter(|&(t, po)| matches!(&s.hist[t as usize][po as usize].kind, HKind::Wait { participants, .. } if !participants.is_empty()))
            .collect();
        let participants = |(t, po): (u32, u32)| match &s.hist[t as usize][po as usize].kind {
            HKind::Wait { participants, .. } => Some(participants),
            _ => None,
        };
        // The waits of one phase share its member list (`state::Members`):
        // each distinct list's members are linked once, and each wait to
        // the list's first member, which gives the classes linking each
        // wait to each member did (T waits of T members cost T^2 unions).
        let mut first_of: HashMap<*const Vec<(u32, u32)>, Option<usize>> = HashMap::default();
        for &w in &waits {
            let Some(list) = participants(w) else { continue };
            let first = *first_of.entry(std::sync::Arc::as_ptr(list)).or_insert_with(|| {
                let mut members = list.iter().filter(|x| x.0 != LAUNCH).map(|&x| eb.index(x));
                let first = members.next();
                if let Some(f) = first {
                    for x in members {
                        let (a, b) = (root(&mut parent, x), root(&mut parent, f));
                        parent[a] = b;
                    }
                }
                first
            });
            if let Some(f) = first {
                let (a, b) = (root(&mut parent, eb.index(w)), root(&mut parent, f));
                parent[a] = b;
            }
        }
        let roots: Vec<usize> = (0..n).map(|x| root(&mut parent, x)).collect();
        let mut size = vec![0usize; n];
        for &r in &roots {
            size[r] += 1;
        }
        // Per target, the classes of two or more events on it: a wait
        // whose target holds its own class alone has nothing of another
        // phase to look for (after compaction, a barrier holds one phase).
        // And per target the events of those classes, in history order:
        // the only ones a wait on it looks among.
        let mut classes: HashMap<Target, Vec<usize>> = HashMap::default();
        let mut on_target: HashMap<Target, Vec<(u32, u32)>> = HashMap::default();
        for (t, h) in s.hist.iter().enumerate() {
            for (po, ev) in h.iter().enumerate() {
                let r = roots[eb.index((t as u32, po as u32))];
                if size[r] >= 2 {
                    let c = classes.entry(ev.target).or_default();
                    if !c.contains(&r) {
                        c.push(r);
                    }
                    on_target.entry(ev.target).or_default().push((t as u32, po as u32));
                }
            }
        }
        // Per participant list, target and class, the events on the target of
        // another class that some participant executes before: one pass
        // over participants and events per phase, not per wait (the T
        // waits of a phase of T participants would cost T^2 per event).
        type Key = (*const Vec<(u32, u32)>, Target, usize);
        let mut after_member: HashMap<Key, Vec<bool>> = HashMap::default();
        for &w in &waits {
            let target = s.hist[w.0 as usize][w.1 as usize].target;
            let phase = roots[eb.index(w)];
            if classes.get(&target).is_none_or(|c| c.iter().all(|&r| r == phase)) {
                continue;
            }
            let Some(list) = participants(w) else { continue };
            let events = &on_target[&target];
            let other = |x: (u32, u32)| roots[eb.index(x)] != phase;
            let reached = after_member
                .entry((std::sync::Arc::as_ptr(list), target, phase))
                .or_insert_with(|| {
                    (events.iter())
                        .map(|&x| other(x) && list.iter().any(|&a| a != x && eb.eb(a, x)))
                        .collect()
                });
            // The events of another phase that execute before `w`, in
            // history order; found once per wait rather than once per
            // participant (T waits of T participants over 2T events cost
            // T^3 at every compaction). A wait none of whose events a
            // participant executes before has nothing to report.
            if !(events.iter().zip(reached.iter())).any(|(&x, &r)| r && x != w && eb.eb(x, w)) {
                continue;
            }
            let between: Vec<(u32, u32)> = (events.iter().copied())
                .filter(|&x| x != w && other(x) && eb.eb(x, w))
                .collect();
            for &a in list.iter() {
                for &x in &between {
                    if x != a && eb.eb(a, x) {
                        return Some(format!(
                            "{} participates in {}, but {} of another phase executes between them",
                            self.label_of(s, a.0, a.1, ident),
                            self.label_of(s, w.0, w.1, ident),
                            self.label_of(s, x.0, x.1, ident)
                        ));
                    }
                }
            }
        }
        None
    }

    /// arrive-then-drop ("Execution Model", an arrive A and a later drop D
    /// of one thread on one barrier: A participates in no wait, or in one
    /// that executes before D; "Informational Notes": no drop after an
    /// arrive before the barrier completes). A thread-counted arrive is
    /// exempt (docs/semantics.md: its phase completes at its count, which
    /// a drop does not change), and an `arrive_drop` is one operation, no
    /// arrive followed by a drop. The message for the first such pair of
    /// `s`. Compaction forgets an arrive only once a wait on its phase
    /// precedes every later drop of its thread.
    pub(crate) fn arrive_then_drop(&self, s: &State, eb: &LazyEb, ident: &[u32]) -> Option<String> {
        // The pairs to judge: an arrive, then a drop of its thread on
        // its barrier.
        let mut pairs = Vec::new();
        for (t, h) in s.hist.iter().enumerate() {
            for (d, drop) in h.iter().enumerate().filter(|(_, e)| matches!(e.kind, HKind::Drop)) {
                for (a, _) in h[..d].iter().enumerate().filter(|(_, e)| {
                    e.target == drop.target
                        && matches!(e.kind, HKind::Arrive(_, c, _) if !matches!(c, Some(ArriveCount::Threads(_))))
                }) {
                    pairs.push(((t as u32, a as u32), (t as u32, d as u32)));
                }
            }
        }
        // A wait of the arriving thread itself, between the arrive and the
        // drop, that the arrive participates in executes before the drop
        // (program order): such a pair is fine, and listing every wait of
        // every arrive (a block of 1,024 threads: a million entries) is
        // left to the rest.
        pairs.retain(|&((t, a), (_, d))| {
            !s.hist[t as usize][a as usize + 1..d as usize].iter().any(|e| {
                e.target == s.hist[t as usize][a as usize].target
                    && matches!(&e.kind, HKind::Wait { participants, .. } if participants.contains(&(t, a)))
            })
        });
        if pairs.is_empty() {
            return None;
        }
        let arrives: Vec<(u32, u32)> = pairs.iter().map(|&(a, _)| a).collect();
        let waits_of = Self::waits_of(s, &arrives);
        for (a, d) in pairs {
            let Some(ws) = waits_of.get(&a).filter(|ws| !ws.is_empty()) else {
                continue;
            };
            if !ws.iter().any(|&w| eb.eb(w, d)) {
                return Some(format!(
                    "{} arrives, then {} drops before any wait its arrive participates in has completed (e.g. {})",
                    self.label_of(s, a.0, a.1, ident),
                    self.label_of(s, d.0, d.1, ident),
                    self.label_of(s, ws[0].0, ws[0].1, ident)
                ));
            }
        }
        None
    }

    /// race (`docs/semantics.md`, "The rules, by name"; project notes
    /// section 6): two plain accesses of one location by different
    /// threads, one a write, that executes-before orders neither way
    /// (barriers order execution only: "Execution Model", its note on
    /// memory). The message for the first such pair of `s`. Compaction
    /// forgets an access only once it executes before every future access.
    ///
    /// Where some barrier orders memory only through fences
    /// ([`Program::fence_events`]), "ordered" is
    /// [`ExecutesBefore::memory`]'s order instead.
    pub(crate) fn race(&self, s: &State, eb: &LazyEb, ident: &[u32]) -> Option<String> {
        let plain: Vec<((u32, u32), &HEvent)> = s
            .hist
            .iter()
            .enumerate()
            .flat_map(|(t, h)| h.iter().enumerate().map(move |(po, e)| ((t as u32, po as u32), e)))
            .filter(|(_, e)| matches!(e.kind, HKind::Read | HKind::Write))
            .collect();
        let memory = std::cell::OnceCell::new();
        let ordered = |x, y| {
            if self.p.fence_events {
                memory.get_or_init(|| ExecutesBefore::memory(s, self.p)).eb(x, y)
            } else {
                eb.eb(x, y)
            }
        };
        let order = if self.p.fence_events {
            "executes-before through fences"
        } else {
            "executes-before"
        };
        for (i, &(x, ex)) in plain.iter().enumerate() {
            for &(y, ey) in &plain[i + 1..] {
                if x.0 == y.0 || ex.target != ey.target || !(ex.kind == HKind::Write || ey.kind == HKind::Write) {
                    continue;
                }
                let (before, after) = (ordered(x, y), ordered(y, x));
                if !before && !after {
                    return Some(format!(
                        "{} and {} are not ordered by {order}",
                        self.label_of(s, x.0, x.1, ident),
                        self.label_of(s, y.0, y.1, ident)
                    ));
                }
                // Ordered; a generic write before an async-proxy access
                // also through a proxy fence of the writer.
                let (w, a) = if before { (x, y) } else { (y, x) };
                if self.needs_proxy_fence(s, w, a) && !self.proxy_fenced(s, eb, w, a) {
                    return Some(format!(
                        "{} and {} are ordered only by {order}: a generic write reaches an access of the async \
                         proxy only through a proxy fence (`fence.proxy.async`) of the writer after the write",
                        self.label_of(s, w.0, w.1, ident),
                        self.label_of(s, a.0, a.1, ident)
                    ));
                }
            }
        }
        None
    }

    /// Whether ordering write `w` before access `a` needs a proxy fence
    /// (`bc_rules`' race rule, the same reading): `w` is a generic write
    /// and `a` an access of an async-proxy agent.
    fn needs_proxy_fence(&self, s: &State, w: (u32, u32), a: (u32, u32)) -> bool {
        let proxy = |t: u32| self.p.async_agent(ThreadId(t));
        s.hist[w.0 as usize][w.1 as usize].kind == HKind::Write && !proxy(w.0) && proxy(a.0)
    }

    /// Whether a proxy fence of `w`'s thread after `w` executes before `a`;
    /// for a write of a generic copy agent, any proxy fence between them.
    fn proxy_fenced(&self, s: &State, eb: &LazyEb, w: (u32, u32), a: (u32, u32)) -> bool {
        let proxy_fence = |e: &HEvent| e.kind == HKind::Fence(FenceScope::ProxyAsync);
        if self.p.threads[w.0 as usize].kind == ThreadKind::Copy {
            return s.hist.iter().enumerate().any(|(t, h)| {
                h.iter().enumerate().any(|(po, e)| {
                    let f = (t as u32, po as u32);
                    proxy_fence(e) && eb.eb(w, f) && eb.eb(f, a)
                })
            });
        }
        let h = &s.hist[w.0 as usize];
        (w.1 as usize + 1..h.len()).any(|po| proxy_fence(&h[po]) && eb.eb((w.0, po as u32), a))
    }
}
