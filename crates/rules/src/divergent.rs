//! The divergent-barrier rule (CUDA Programming Guide, "Synchronization
//! Functions": `__syncthreads` in conditional code is allowed only when the
//! condition is the same for the whole block, otherwise execution may hang
//! or misbehave), judged on the phases of the bmo replay.

use crate::facts::Facts;
use crate::phases::Phase;
use crate::Checker;
use bc_graph::{ArriveCount, BarrierId, EventKind};
use bc_models::Rule;

impl Checker<'_> {
    /// The instruction site of event `m`: its thread's code and its pc.
    fn site(&self, m: bc_graph::EventId) -> (Option<u32>, u32) {
        let ev = self.exec.event(m);
        (ev.thread.map(|t| self.exec.thread(t).code), ev.pc)
    }

    /// Is phase `p` block-wide: it has an arrival, and its count is not a
    /// written thread count (the latest counted arrive's count)?
    fn block_wide(&self, p: &Phase) -> bool {
        let exec = self.exec;
        let arrivals = p.members.iter().any(|&m| {
            matches!(
                exec.event(m).kind,
                EventKind::Arrive { .. } | EventKind::ArriveDrop { .. }
            )
        });
        let count = p.members.iter().rev().find_map(|&m| match exec.event(m).kind {
            EventKind::Arrive { count, .. } => count,
            _ => None,
        });
        arrivals && !matches!(count, Some(ArriveCount::Threads(_)))
    }

    /// divergent-barrier ("Synchronization Functions": a uniform barrier,
    /// `__syncthreads`, is reached by every thread of its scope from one
    /// instruction site). Two ways to see it: a block-wide phase of a
    /// uniform barrier completed by arrives from different sites of one
    /// code (compared with the phase's first arrive) or because a thread's
    /// exit dropped the barrier; and a wait stuck for good on a uniform
    /// barrier whose open phase is block-wide (some threads reached it,
    /// the others never will).
    pub(crate) fn divergent_barrier(&mut self, f: &Facts) {
        let exec = self.exec;
        let uniform = |b: BarrierId| exec.props(b).uniform;
        for p in f.replay.phases.iter().filter(|p| p.completed && uniform(p.barrier)) {
            if !self.block_wide(p) {
                continue;
            }
            let site = |m| self.site(m);
            let arrives: Vec<_> = p
                .members
                .iter()
                .copied()
                .filter(|&m| matches!(exec.event(m).kind, EventKind::Arrive { .. }))
                .collect();
            let mixed = arrives.split_first().and_then(|(&first, rest)| {
                let (code, pc) = site(first);
                rest.iter()
                    .copied()
                    .find(|&m| site(m).0 == code && site(m).1 != pc)
                    .map(|m| (first, m))
            });
            let exit = p
                .members
                .iter()
                .copied()
                .find(|&m| matches!(exec.event(m).kind, EventKind::Drop) && exec.event(m).is_implicit());
            let (why, events) = match (mixed, exit) {
                (Some((a, m)), _) => ("different instruction sites", vec![a, m]),
                (None, Some(d)) => ("only some threads (others exited)", vec![d]),
                (None, None) => continue,
            };
            let msg = format!(
                "phase {} of {} is completed by {why}",
                p.number,
                self.barrier_name(p.barrier)
            );
            self.report(Rule::DivergentBarrier, msg, events);
        }
        // The open phase of each barrier: its latest phase, unless it
        // completed or a later init abandoned it.
        let open = |b: BarrierId| {
            f.replay
                .phases
                .iter()
                .rev()
                .find(|p| p.barrier == b)
                .filter(|p| !p.completed && p.epoch == f.replay.epochs[b.index()])
        };
        for e in exec.ids() {
            let ev = exec.event(e);
            let (EventKind::Wait { completed: false, .. }, Some(b)) = (&ev.kind, ev.barrier()) else {
                continue;
            };
            if uniform(b) && open(b).is_some_and(|p| self.block_wide(p)) {
                let msg = format!(
                    "{} is reached by only some threads of its scope: {} never completes",
                    self.barrier_name(b),
                    self.n(e)
                );
                self.report(Rule::DivergentBarrier, msg, vec![e]);
            }
        }
    }

    /// aligned-barrier (PTX ISA, `barrier{.cta}`: an `.aligned` barrier
    /// instruction is executed by all threads together, and in conditional
    /// code only where they all take the same branch; issue 18 reads it per
    /// warp): in a completed phase where a thread arrives through an
    /// `.aligned` instruction, every thread of its warp arrives in that
    /// phase, and all through that one instruction site. A lane that
    /// arrives elsewhere, exits instead (an exit drop is no arrival), or
    /// is left for a later phase makes the warp divergent at the barrier.
    pub(crate) fn aligned_barrier(&mut self, f: &Facts) {
        if !self.rules.has(Rule::AlignedBarrier) {
            return;
        }
        let exec = self.exec;
        let threads = exec.threads.len() as u32;
        let site = |m| self.site(m);
        let mut found = Vec::new();
        for p in f.replay.phases.iter().filter(|p| p.completed) {
            let mut seen = Vec::new();
            for &a in &p.members {
                let ev = exec.event(a);
                let (EventKind::Arrive { aligned: true, .. }, Some(t)) = (&ev.kind, ev.thread) else {
                    continue;
                };
                let warp = exec.thread(t).warp;
                if seen.contains(&(warp, site(a))) {
                    continue;
                }
                seen.push((warp, site(a)));
                // Each thread of the warp arrives in the phase at `a`'s
                // site. A warp that runs two `.aligned` arrives in one
                // phase (`ub(arrive-twice)`) runs each of them together,
                // so a lane's other arrivals are not divergence.
                // A copy agent carries its issuer's place but is no lane.
                let lanes = (0..threads)
                    .map(bc_graph::ThreadId)
                    .filter(|&u| exec.thread(u).warp == warp && !exec.thread(u).agent);
                for u in lanes {
                    let mine: Vec<bc_graph::EventId> = p
                        .members
                        .iter()
                        .copied()
                        .filter(|&m| exec.event(m).thread == Some(u))
                        .collect();
                    let arrives = |m: bc_graph::EventId| matches!(exec.event(m).kind, EventKind::Arrive { .. });
                    if mine.iter().any(|&m| arrives(m) && site(m) == site(a)) {
                        continue;
                    }
                    let why = match mine.iter().copied().find(|&m| !arrives(m)) {
                        _ if mine.is_empty() => Some((None, "does not arrive in that phase")),
                        Some(m) => Some((Some(m), "leaves it by exiting")),
                        None => Some((mine.first().copied(), "arrives through another instruction")),
                    };
                    if let Some((m, why)) = why {
                        found.push((p.number, p.barrier, a, u, m, why));
                        break;
                    }
                }
            }
        }
        for (number, b, a, u, m, why) in found {
            let msg = format!(
                "{} arrives through an .aligned instruction in phase {number} of {}, and {} of its warp {why}",
                self.n(a),
                self.barrier_name(b),
                self.thread_name(u)
            );
            let mut events = vec![a];
            events.extend(m);
            self.report(Rule::AlignedBarrier, msg, events);
        }
    }

    /// aligned-barrier for the wait of a split `.aligned` barrier
    /// (`barrier.cluster.wait.aligned`; PTX ISA, `barrier.cluster`: with
    /// `.aligned` every thread of the warp executes that same wait
    /// instruction): where a lane completes an `.aligned` wait on a
    /// phase, no lane of its warp waits on that phase through another
    /// instruction, and none exits (its end drop) without waiting on it.
    /// Both are facts once their events exist, so the explorer judges the
    /// same at each wait and each end (`System::aligned_wait_rule`). A
    /// lane that has neither waited nor ended yet is no finding: it may
    /// still wait there.
    pub(crate) fn aligned_wait(&mut self) {
        if !self.rules.has(Rule::AlignedBarrier) {
            return;
        }
        let exec = self.exec;
        let sorted = |p: &bc_graph::Participants| {
            let mut v = p.to_vec();
            v.sort_unstable();
            v
        };
        // Per barrier, its completed waits: (event, thread, phase).
        let mut waits: Vec<(bc_graph::EventId, bc_graph::ThreadId, Vec<bc_graph::EventId>, bool)> = Vec::new();
        let mut ends: Vec<(bc_graph::ThreadId, bc_graph::BarrierId)> = Vec::new();
        for (i, ev) in exec.events.iter().enumerate() {
            let (Some(t), bc_graph::Target::Barrier(b)) = (ev.thread, ev.target) else {
                continue;
            };
            match &ev.kind {
                EventKind::Wait {
                    participants,
                    completed: true,
                    aligned,
                    ..
                } if !participants.is_empty() => {
                    waits.push((bc_graph::EventId(i as u32), t, sorted(participants), *aligned));
                }
                EventKind::Drop if ev.pc == bc_graph::AT_END => ends.push((t, b)),
                _ => {}
            }
        }
        let mut found = None;
        'outer: for (e, t, phase, aligned) in &waits {
            if !aligned {
                continue;
            }
            let b = exec.event(*e).target;
            let warp = exec.thread(*t).warp;
            let lanes = (0..exec.threads.len() as u32)
                .map(bc_graph::ThreadId)
                .filter(|&u| u != *t && exec.thread(u).warp == warp && !exec.thread(u).agent);
            for u in lanes {
                let theirs: Vec<bc_graph::EventId> = (waits.iter())
                    .filter(|(x, v, ph, _)| *v == u && exec.event(*x).target == b && ph == phase)
                    .map(|w| w.0)
                    .collect();
                let why = if let Some(&x) = theirs.iter().find(|&&x| self.site(x) != self.site(*e)) {
                    Some((Some(x), "waits on that phase through another instruction"))
                } else if theirs.is_empty() && ends.iter().any(|&(v, c)| v == u && bc_graph::Target::Barrier(c) == b) {
                    Some((None, "exits without waiting on that phase"))
                } else {
                    None
                };
                if let Some((x, why)) = why {
                    found = Some((*e, u, x, why));
                    break 'outer;
                }
            }
        }
        if let Some((e, u, x, why)) = found {
            let b = exec.event(e).barrier().expect("a wait on a barrier");
            let msg = format!(
                "{} waits through an .aligned instruction on a phase of {}, and {} of its warp {why}",
                self.n(e),
                self.barrier_name(b),
                self.thread_name(u)
            );
            let mut events = vec![e];
            events.extend(x);
            self.report(Rule::AlignedBarrier, msg, events);
        }
    }
}

impl Checker<'_> {
    /// barrier-forms (PTX ISA, `barrier{.cta}`; docs/semantics.md,
    /// "Barrier forms in one phase"): different warps may reach one
    /// barrier through different forms, but
    /// - no phase holds both a reduction's arrival (`bar.red`) and a sync's
    ///   or an arrive's: "unpredictable" by the ISA;
    /// - the lanes of a warp reach a barrier counted in whole warps
    ///   through one kind of instruction and one barrier. A warp's lanes
    ///   arrive together (the explorer holds each until every live lane
    ///   stands at such an arrive), so each lane's k-th arrive that its
    ///   warp makes as one (`.aligned`, or counted in whole warps) is the
    ///   warp's k-th arrival; two lanes whose k-th are non-`.aligned`
    ///   arrives of different kinds (`syncs`, `red`) or on different
    ///   barriers split the warp. The explorer judges the same where the
    ///   warp's lanes stand at those arrives (`System::warp_split_rule`,
    ///   `System::red_intermixed`).
    pub(crate) fn barrier_forms(&mut self, f: &Facts) {
        if !self.rules.has(Rule::BarrierForms) {
            return;
        }
        let exec = self.exec;
        let red_of = |e: bc_graph::EventId| match exec.event(e).kind {
            EventKind::Arrive { red, .. } => Some(red),
            _ => None,
        };
        let mut found = Vec::new();
        for p in &f.replay.phases {
            let red = p.members.iter().copied().find(|&a| red_of(a) == Some(true));
            let other = p.members.iter().copied().find(|&a| red_of(a) == Some(false));
            if let (Some(x), Some(y)) = (red, other) {
                let msg = format!(
                    "{} and {} arrive in phase {} of {}: a reduction (bar.red) is intermixed with a sync or an arrive on one active barrier (PTX ISA, barrier{{.cta}}: unpredictable)",
                    self.n(x),
                    self.n(y),
                    p.number,
                    self.barrier_name(p.barrier)
                );
                found.push((msg, vec![x, y]));
            }
        }
        // Per warp, per lane, its arrives the warp makes as one.
        let mut lanes: std::collections::BTreeMap<u32, std::collections::BTreeMap<u32, Vec<bc_graph::EventId>>> =
            Default::default();
        for e in exec.ids() {
            let ev = exec.event(e);
            let (EventKind::Arrive { aligned, whole, .. }, Some(t)) = (&ev.kind, ev.thread) else {
                continue;
            };
            let facts = exec.thread(t);
            if !(*aligned || *whole) || facts.agent || facts.warp == u32::MAX {
                continue;
            }
            lanes.entry(facts.warp).or_default().entry(t.0).or_default().push(e);
        }
        let form = |e: bc_graph::EventId| match exec.event(e).kind {
            EventKind::Arrive {
                aligned: false,
                whole: true,
                syncs,
                red,
                ..
            } => Some((exec.event(e).target, syncs, red)),
            _ => None,
        };
        for warp in lanes.values() {
            let seqs: Vec<&Vec<bc_graph::EventId>> = warp.values().collect();
            let split = (0..seqs.iter().map(|s| s.len()).max().unwrap_or(0)).find_map(|k| {
                let at: Vec<bc_graph::EventId> = seqs.iter().filter_map(|s| s.get(k).copied()).collect();
                at.iter().find_map(|&x| {
                    let fx = form(x)?;
                    at.iter()
                        .copied()
                        .find(|&y| form(y).is_some_and(|fy| fy != fx))
                        .map(|y| (x, y))
                })
            });
            if let Some((x, y)) = split {
                let msg = format!(
                    "{} and {} of one warp arrive through different barrier instructions, or on different barriers, at a barrier counted in whole warps (undefined: docs/semantics.md, \"Barrier forms in one phase\")",
                    self.n(x),
                    self.n(y)
                );
                found.push((msg, vec![x, y]));
            }
        }
        for (msg, events) in found {
            self.report(Rule::BarrierForms, msg, events);
        }
    }
}
