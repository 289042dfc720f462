//! One execution for all (`Reductions::det`, docs/explorer.md,
//! "Reductions", item 10): the test that lets the search decide a
//! deterministic program (`analysis/determinism.rs`) on the one execution
//! it ran (`search/det.rs`).
//!
//! In a deterministic program each thread's operations are fixed by its
//! place; the interleaving decides only which phase of its barrier each
//! barrier modification (an arrive, a thread's end dropping the barrier)
//! falls in. [`phases_fixed`] holds, on a run whose history is whole,
//! when that was decided too: on every barrier, each modification of a
//! phase after the first executes after a wait that completed on the
//! phase before (barrier-executes-before, "Execution Model": program order
//! and barrier-participates-in), and the arrives of each phase agree on
//! the count and the expected-count update they carry. This is the
//! "barrier recycling" condition of WEFT (Sharma, Faust, Ogden, Ghosh,
//! Sorensen, Gopalakrishnan, PLDI 2015, on named barriers), read over this
//! model's phases.
//!
//! Why it is enough (every execution then fills every phase with the
//! modifications this run put there): take, in another execution, the
//! first modification `m` placed in another phase than here, say phase
//! `i` where this run had `j`. Every modification before `m` is where
//! this run put it, and so is every wait before it (a wait here takes the
//! phase of its own thread's arrive, `own_phase.rs`), so every
//! executes-before path this run has into `m` also runs before `m` there.
//! If `i < j`: `m` executes after a wait on phase `j - 1`, which completed
//! before `m`, with this run's members; so phases up to `j - 1` hold their
//! modifications, and `m` comes after them: `i >= j`. If `i > j`: phase
//! `j` completed before `m` with fewer members than here, `m` missing,
//! while every member of a later phase executes after that completion;
//! with one count per phase and drops only lowering what a phase
//! expects, a phase short of a member does not complete. So `i = j`.
//! Executes-before is then the same in every execution, and with it every
//! rule's judgement, the race rule's included; an execution that ends
//! stuck ends stuck in every order, and one that finishes finishes in
//! every order.

use crate::analysis::history::ExecutesBefore;
use crate::state::{HKind, State, LAUNCH};
use bc_graph::Target;
use rustc_hash::FxHashMap;

/// Whether the phases of the whole history of `s` (nothing forgotten,
/// nothing renamed: a run from the initial state without normalizing)
/// are filled the same way by every execution of the program (module
/// text).
pub(crate) fn phases_fixed(s: &State) -> bool {
    let eb = ExecutesBefore::of(s);
    for (b, bmo) in s.bmo.iter().enumerate() {
        let cuts = &s.bars[b].cuts;
        // The phase of each bmo position: how many completions came at or
        // before it.
        let mut phase_of: FxHashMap<(u32, u32), usize> = FxHashMap::default();
        let mut phases: Vec<Vec<(u32, u32)>> = vec![Vec::new()];
        let mut carried: Vec<Option<(Option<i64>, Option<bc_graph::ArriveCount>)>> = vec![None];
        let mut next_cut = 0;
        for (i, &m) in bmo.iter().enumerate() {
            while next_cut < cuts.len() && cuts[next_cut].0 as usize <= i {
                next_cut += 1;
                phases.push(Vec::new());
                carried.push(None);
            }
            if m.0 == LAUNCH {
                if i != 0 {
                    return false;
                }
                continue;
            }
            let k = phases.len() - 1;
            match &s.hist[m.0 as usize][m.1 as usize].kind {
                HKind::Arrive(update, count, _) => match carried[k] {
                    None => carried[k] = Some((*update, *count)),
                    Some(c) if c == (*update, *count) => {}
                    Some(_) => return false,
                },
                HKind::Drop => {}
                _ => return false,
            }
            phase_of.insert(m, k);
            phases[k].push(m);
        }
        while next_cut < cuts.len() && cuts[next_cut].0 as usize <= bmo.len() {
            next_cut += 1;
            phases.push(Vec::new());
            carried.push(None);
        }
        if next_cut != cuts.len() {
            return false;
        }
        if phases.len() < 2 && phases[0].is_empty() {
            continue;
        }
        // The waits that completed on each phase.
        let target = Target::Barrier(bc_graph::BarrierId(b as u32));
        let mut waiters: Vec<Vec<(u32, u32)>> = vec![Vec::new(); phases.len()];
        for (u, h) in s.hist.iter().enumerate() {
            for (po, ev) in h.iter().enumerate() {
                if ev.target != target {
                    continue;
                }
                if let HKind::Wait { participants, .. } = &ev.kind {
                    let Some(k) = participants.first().and_then(|m| phase_of.get(m)) else {
                        return false;
                    };
                    waiters[*k].push((u as u32, po as u32));
                }
            }
        }
        for k in 1..phases.len() {
            for &m in &phases[k] {
                if !waiters[k - 1].iter().any(|&w| eb.eb(w, m)) {
                    return false;
                }
            }
        }
    }
    true
}
