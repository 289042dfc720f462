//! A worker's context for the transitions: what `System::step` and the
//! rules it calls (`step.rs`, `rules.rs`, `fuse.rs`) need besides the
//! shared, read-only [`System`](crate::semantics::System): the findings the
//! current step raised, the thread renaming of the state being worked on,
//! whether steps leave out their texts, and what fusion needs to take a
//! wait back. Each explorer owns one and passes it to every step.

use crate::state::{BState, TState};
use bc_syntax::FindingKind;

/// A worker's context for the transitions (see the module doc).
pub(crate) struct Worker {
    /// Findings raised while computing the current step (operational).
    /// (kind, message, objectless): objectless findings come from operations
    /// that act on no barrier object, so no execution can show them.
    pub(crate) pending: Vec<(FindingKind, String, bool)>,
    /// For the state being worked on: which declared thread each thread
    /// index stands for (symmetry renames threads; witnesses show the
    /// declared names along the path).
    pub(crate) ident: Vec<u32>,
    /// Steps are being taken for the search, not for a witness: leave out
    /// their texts (a witness replays them).
    pub(crate) quiet: bool,
    /// What a fusible wait may change, saved before it is tried (reused
    /// between tries): its thread and its barrier, if it changes one
    /// (`fuse.rs`).
    pub(crate) fuse: Option<(TState, Option<BState>)>,
    /// Set by fusion while it tries a wait: a thread that reaches its end
    /// in the local steps after it stops there instead (`held_end` is set),
    /// and the wait is taken back.
    pub(crate) hold_end: bool,
    pub(crate) held_end: bool,
    /// Set by a step the search cannot take (a copy with no free agent):
    /// the search halts for this reason.
    pub(crate) halt: Option<crate::state::answer::Stop>,
    /// Set while a witness is replayed: every step taken (chosen or
    /// fused, not the agent steps a step takes inside it), with the
    /// members of the completed phase a wait chose, so that the replay
    /// can take the same steps on the whole history
    /// (`search/replay.rs`, `Whole`).
    pub(crate) trace: Option<Vec<Traced>>,
    /// Set while the lanes after the first of a warp's arrival step
    /// ([`System::step_warp`], and a replay following one): their arrives
    /// count one each, the first lane's counted the warp's absent lanes
    /// (`System::absent_lanes`), and the state they step from is the
    /// middle of the warp's transition, which no lane mode describes.
    ///
    /// [`System::step_warp`]: crate::semantics::System::step_warp
    pub(crate) following: bool,
}

/// A step as a witness replay traces it: the choice, and for a wait that
/// chose a completed phase, that phase's members (a phase's index in the
/// barrier's record differs where compaction forgot phases).
pub(crate) type Traced = (crate::state::Choice, Option<Vec<(u32, u32)>>);

impl Worker {
    /// A worker's context for a program of `threads` threads: nothing
    /// pending, the identity renaming, steps with their texts.
    pub(crate) fn new(threads: usize) -> Worker {
        Worker {
            pending: Vec::new(),
            ident: (0..threads as u32).collect(),
            quiet: false,
            fuse: None,
            hold_end: false,
            held_end: false,
            halt: None,
            trace: None,
            following: false,
        }
    }
}
