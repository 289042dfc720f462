//! The reductions: each shrinks the state space the search visits without
//! changing a verdict, each is switched by its own flag, and none imports
//! another (docs/explorer.md, "Reductions"). Floor 4 of the explorer
//! (docs/ARCHITECTURE.md, "The explore crate"): they read the state, the
//! analyses and the transition system; what one needs of another (a
//! canonical state, a persistent set built of several) is composed here.

pub(crate) mod canon;
pub(crate) mod compact;
pub(crate) mod det;
pub(crate) mod fuse;
pub(crate) mod por;
pub(crate) mod required;
pub(crate) mod symmetry;

use crate::analysis::history::ExecutesBefore;
use crate::semantics::worker::Worker;
use crate::semantics::System;
use crate::state::answer::Step;
use crate::state::budget::Budget;
use crate::state::{Choice, State};
use compact::Compacted;

// The order the search applies them in. After every step of a thread:
//
// 1. completed-wait, arrive and access fusion (`fuse.rs`): the steps that
//    are persistent sets on their own, taken in the same transition
//    ([`fused_steps`]); fused arrives leave phases out of order;
// 2. phase-order canonicalization (`canon.rs`): the members of each phase
//    of a sortable barrier sorted, then the completed phases no wait can
//    take retired (`System::retire_phases`, part of the transition
//    system) ([`Normalizer::compact`]);
// 3. history compaction (`compact.rs`): what no future violation can
//    involve is forgotten, after the caller had the rule checker judge it;
//    the history it changed is sorted again ([`Normalizer::compact`]);
// 4. symmetry (`symmetry.rs`): the threads of each class sorted by their
//    own state, the state renamed, and its phases sorted again under the
//    renaming ([`Normalizer::symmetrize`]).
//
// And at every state, on the choices it offers ([`persistent`],
// [`prune_symmetric`]):
//
// 5. partial-order reduction (`por.rs`): the steps of one independent
//    group; within it an arrive opening a phase of a barrier whose arrives
//    fuse, alone (`fuse.rs`, "Arrive fusion"); else a step its
//    phase-counted barrier's phase cannot do without, alone
//    (`required.rs`);
// 6. symmetric choice pruning (`symmetry.rs`): of interchangeable threads
//    with equal states, one step stands for all.
//
// Each is off with its flag (`Reductions`, `--no-fuse`, `--no-canonical`,
// `--no-compact`, `--no-symmetry`, `--no-por`); a reduction off leaves
// the state or the choices as they were. The states every reduction
// compares are in the canonical form of step 2 ([`canonical`]).

/// Puts `s` in the form states are compared in: the members of each phase
/// of a sortable barrier sorted (`canon.rs`), the completed phases no wait
/// can take retired.
pub(crate) fn canonical(sys: &System, s: &mut State) {
    sys.canonicalize(s);
    sys.retire_phases(s);
}

/// Step 1: the fused steps after a step of the search, with the phases the
/// fused arrives joined sorted, as after single steps (compaction, next,
/// must see them sorted). `budget` as `System::fused_steps` takes it;
/// `stepped`: the thread that stepped, from a state with nothing left to
/// fuse (every state a transition reached; not the initial state), so
/// that only its group is scanned.
pub(crate) fn fused_steps(
    sys: &System,
    s: &mut State,
    w: &mut Worker,
    budget: Option<&Budget>,
    stepped: Option<usize>,
) -> Vec<Step> {
    let (steps, arrived) = sys.fused_steps(s, w, budget, stepped);
    if arrived {
        sys.canonicalize(s);
    }
    steps
}

/// Steps 2-4 on a new state: [`Normalizer::compact`], then (after the
/// caller judged what compaction forgot) [`Normalizer::symmetrize`].
/// Executes-before over the history is computed at most once unless
/// compaction changes the history (sorting and renaming keep it).
#[derive(Default)]
pub(crate) struct Normalizer {
    eb: Option<ExecutesBefore>,
}

impl Normalizer {
    /// Steps 2 and 3: sorts the phases and retires, then compacts (when on)
    /// and sorts a history it changed again. Hands back the execution
    /// compaction forgets from, for the caller to have judged; `ident` is
    /// the thread renaming, `budget` the search's (none in a replay;
    /// compaction stops part way once it halts, and the caller discards
    /// `s`), `verify` checks the order compaction keeps.
    pub(crate) fn compact<'p>(
        &mut self,
        sys: &System<'p>,
        s: &mut State,
        ident: &[u32],
        budget: Option<&Budget>,
        verify: bool,
    ) -> Option<Compacted<'p>> {
        sys.canonicalize_reusing(s, &mut self.eb, None);
        sys.retire_phases(s);
        // The aligned-barrier rule on `.aligned` waits reads whether a
        // lane of the warp waited on a phase or exited, over the whole
        // history: compaction may forget a lane's end or its wait while a
        // mate can still wait on that phase (review of session 38: a lane
        // that exited in an earlier round was lost, and the divergence
        // with it). Such programs keep their whole history.
        if !sys.reductions.compact || sys.an.aligned_waits {
            return None;
        }
        let old = verify.then(|| s.clone());
        let c = sys.compact(s, ident, &mut self.eb, budget, verify)?;
        if let Some(old) = &old {
            ExecutesBefore::check_compaction(old, s, &c.remap);
        }
        // Compaction keeps the phases' order (it renumbers each thread's
        // kept events in program order, and keeps executes-before among
        // them); a history it changed is sorted again all the same. One it
        // left alone was sorted above.
        self.eb = None;
        sys.canonicalize_reusing(s, &mut self.eb, None);
        Some(c)
    }

    /// Step 4: symmetry, renaming `ident` along with the threads, then the
    /// phases the renaming left out of order sorted again.
    pub(crate) fn symmetrize(&mut self, sys: &System, s: &mut State, ident: &mut Vec<u32>, budget: Option<&Budget>) {
        if let Some(perm) = sys.symmetrize(s, budget) {
            *ident = perm.iter().map(|&old| ident[old]).collect();
            sys.canonicalize_reusing(s, &mut self.eb, Some(&perm));
        }
    }
}

/// Step 5: the persistent set of `choices` (a state's enabled steps, in
/// thread order): the steps of the group of the first thread that has one
/// (`por.rs`); within it, the first arrive on a barrier whose arrives fuse
/// alone (`fuse.rs`, "Arrive fusion"); else a step its phase cannot do
/// without (`required.rs`). Every choice where none applies.
pub(crate) fn persistent(sys: &System, s: &State, choices: Vec<Choice>, ident: &[u32]) -> Vec<Choice> {
    let choices = sys.group_persistent(choices);
    // An arrive on a barrier whose arrives fuse is a persistent set on
    // its own, the one that opens a phase included (fuse.rs, "Arrive
    // fusion"): a phase's first arrive need not be tried for every
    // thread (a grid barrier's phase was opened once per block class
    // of threads, and each try normalized a state of all threads).
    // Not on a `cuda::barrier` object under arrive-before-wait: there
    // the thread whose arrive completes a phase owes a wait (`owes`),
    // so arrives of one phase leave different states in different
    // orders (no verdict differs - a lockstep barrier's threads wait
    // between arrives - but the states are not the same).
    if let Some(&c) = choices.iter().find(|c| {
        c.phase.is_none()
            && !sys.owes_on_arrive(c.thread as usize, s)
            && sys.arrive_on_fused(s, c.thread as usize, ident).is_some()
    }) {
        return vec![c];
    }
    // A step its phase cannot do without (required.rs).
    if let Some(c) = sys.required_step(s, &choices, ident) {
        return vec![c];
    }
    choices
}

/// Testing aid for step 5 (`SearchOptions::verify_encoding`): the steps
/// [`persistent`] kept commute with the others (`System::check_independent`,
/// in `por.rs`), states compared in [`canonical`] form.
pub(crate) fn check_independent(sys: &System, s: &State, kept: &[Choice], all: &[Choice]) {
    sys.check_independent(s, kept, all, &|n| canonical(sys, n));
}

/// Step 6: symmetric choice pruning (`System::prune_symmetric`), states
/// compared after canonicalization.
pub(crate) fn prune_symmetric(
    sys: &System,
    s: &State,
    choices: Vec<Choice>,
    budget: &Budget,
) -> (Vec<Choice>, Vec<Vec<u32>>) {
    sys.prune_symmetric(s, choices, budget, &|c| sys.canonicalize(c))
}
