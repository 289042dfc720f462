//! Finding kinds: the stable names used by `expect`, JSON and CI gates.

use std::fmt;

/// The undefined-behaviour kinds of the litmus spec (`ub(KIND)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UbKind {
    UninitializedBarrier,
    DropWithoutJoin,
    NegativeExpectedCount,
    ArriveThenDrop,
    WaitWithoutJoin,
    ExpectedCountTooSmall,
    StalePhase,
    DivergentBarrier,
    CountMismatch,
    CountOverflow,
    SyncwarpMask,
    PrivilegedBarrier,
    UncooperativeGridSync,
    TokenMisuse,
    ArriveBeforeWait,
    InvalidBarrier,
    ArriveTwice,
    CopyNotWaited,
}

impl UbKind {
    pub const ALL: [UbKind; 18] = [
        UbKind::UninitializedBarrier,
        UbKind::DropWithoutJoin,
        UbKind::NegativeExpectedCount,
        UbKind::ArriveThenDrop,
        UbKind::WaitWithoutJoin,
        UbKind::ExpectedCountTooSmall,
        UbKind::StalePhase,
        UbKind::DivergentBarrier,
        UbKind::CountMismatch,
        UbKind::CountOverflow,
        UbKind::SyncwarpMask,
        UbKind::PrivilegedBarrier,
        UbKind::UncooperativeGridSync,
        UbKind::TokenMisuse,
        UbKind::ArriveBeforeWait,
        UbKind::InvalidBarrier,
        UbKind::ArriveTwice,
        UbKind::CopyNotWaited,
    ];

    pub fn name(self) -> &'static str {
        match self {
            UbKind::UninitializedBarrier => "uninitialized-barrier",
            UbKind::DropWithoutJoin => "drop-without-join",
            UbKind::NegativeExpectedCount => "negative-expected-count",
            UbKind::ArriveThenDrop => "arrive-then-drop",
            UbKind::WaitWithoutJoin => "wait-without-join",
            UbKind::ExpectedCountTooSmall => "expected-count-too-small",
            UbKind::StalePhase => "stale-phase",
            UbKind::DivergentBarrier => "divergent-barrier",
            UbKind::CountMismatch => "count-mismatch",
            UbKind::CountOverflow => "count-overflow",
            UbKind::SyncwarpMask => "syncwarp-mask",
            UbKind::PrivilegedBarrier => "privileged-barrier",
            UbKind::UncooperativeGridSync => "uncooperative-grid-sync",
            UbKind::TokenMisuse => "token-misuse",
            UbKind::ArriveBeforeWait => "arrive-before-wait",
            UbKind::InvalidBarrier => "invalid-barrier",
            UbKind::ArriveTwice => "arrive-twice",
            UbKind::CopyNotWaited => "copy-not-waited",
        }
    }

    pub fn from_name(s: &str) -> Option<UbKind> {
        UbKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

/// A finding kind: what `expect` lists and a verdict is a set of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FindingKind {
    Deadlock,
    Nontermination,
    Race,
    Assertion,
    Ub(UbKind),
}

/// A set of finding kinds in one word (copyable into search options):
/// bit 0-3 deadlock, nontermination, race, assertion; 4 + n `ub` kind n.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KindSet(pub u64);

impl KindSet {
    fn bit(k: FindingKind) -> u64 {
        1u64 << match k {
            FindingKind::Deadlock => 0,
            FindingKind::Nontermination => 1,
            FindingKind::Race => 2,
            FindingKind::Assertion => 3,
            FindingKind::Ub(u) => (4 + u as u32).min(63),
        }
    }
    pub fn of<'a>(kinds: impl IntoIterator<Item = &'a FindingKind>) -> KindSet {
        KindSet(kinds.into_iter().fold(0, |m, &k| m | KindSet::bit(k)))
    }
    pub fn contains(self, k: FindingKind) -> bool {
        self.0 & KindSet::bit(k) != 0
    }
}

impl FindingKind {
    pub fn parse(s: &str) -> Option<FindingKind> {
        match s {
            "deadlock" => Some(FindingKind::Deadlock),
            "nontermination" => Some(FindingKind::Nontermination),
            "race" => Some(FindingKind::Race),
            "assertion" => Some(FindingKind::Assertion),
            _ => {
                let inner = s.strip_prefix("ub(")?.strip_suffix(')')?;
                UbKind::from_name(inner).map(FindingKind::Ub)
            }
        }
    }
}

impl FindingKind {
    /// One line on what the kind means, for rule lists of CI formats.
    pub fn summary(self) -> &'static str {
        match self {
            FindingKind::Deadlock => {
                "some execution ends with a thread waiting on a barrier phase that never completes"
            }
            FindingKind::Nontermination => {
                "some execution that is fair under the progress model runs forever without finishing"
            }
            FindingKind::Race => "two conflicting accesses are not ordered by executes-before",
            FindingKind::Assertion => "an assertion of the test fails",
            FindingKind::Ub(k) => k.summary(),
        }
    }
}

impl UbKind {
    /// One line on what the undefined behaviour is.
    pub fn summary(self) -> &'static str {
        match self {
            UbKind::UninitializedBarrier => "a barrier is used before it is initialized",
            UbKind::DropWithoutJoin => "a thread drops a barrier it has not joined",
            UbKind::NegativeExpectedCount => "a barrier's expected count goes below zero",
            UbKind::ArriveThenDrop => "a thread drops a barrier after arriving in the same phase",
            UbKind::WaitWithoutJoin => "a thread waits on a barrier it has not joined",
            UbKind::ExpectedCountTooSmall => "more threads arrive in a phase than the barrier expects",
            UbKind::StalePhase => "a wait names a phase that is neither current nor just completed",
            UbKind::DivergentBarrier => "a block-wide barrier is reached by only some threads of its scope",
            UbKind::CountMismatch => "threads use one barrier with different thread counts",
            UbKind::CountOverflow => "a barrier's count exceeds what the hardware holds",
            UbKind::SyncwarpMask => "a __syncwarp mask does not name the lanes that execute it",
            UbKind::PrivilegedBarrier => "a privileged barrier is used outside a trap handler",
            UbKind::UncooperativeGridSync => "grid.sync in a launch that is not cooperative",
            UbKind::TokenMisuse => "an arrival token is waited on twice or on another barrier",
            UbKind::ArriveBeforeWait => "a thread arrives again before waiting on its previous arrival",
            UbKind::InvalidBarrier => "a barrier is used after it is invalidated",
            UbKind::ArriveTwice => "a thread arrives twice in one phase of a named barrier",
            UbKind::CopyNotWaited => "an asynchronous copy is still unobserved when its kernel ends",
        }
    }
}

impl fmt::Display for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FindingKind::Deadlock => f.write_str("deadlock"),
            FindingKind::Nontermination => f.write_str("nontermination"),
            FindingKind::Race => f.write_str("race"),
            FindingKind::Assertion => f.write_str("assertion"),
            FindingKind::Ub(k) => write!(f, "ub({})", k.name()),
        }
    }
}

/// Every statement name of the litmus v1 spec that is an instruction (not a
/// keyword such as `if`). The parser uses it to tell `r = load x` (an
/// instruction with a result) from `r = x + 1` (an assignment).
pub const INSTRUCTION_NAMES: &[&str] = &[
    "init",
    "join",
    "drop",
    "arrive",
    "wait",
    "arrive_wait",
    "try_wait",
    "arrive_drop",
    "arrive_n",
    "barrier_arrive_tx",
    "s_barrier",
    "s_barrier_signal",
    "s_barrier_signal_isfirst",
    "s_barrier_wait",
    "s_barrier_init",
    "s_barrier_join",
    "s_barrier_leave",
    "__syncthreads",
    "__syncthreads_count",
    "__syncthreads_and",
    "__syncthreads_or",
    "__syncwarp",
    "bar.sync",
    "bar.arrive",
    "barrier.sync",
    "barrier.sync.aligned",
    "barrier.cta.sync",
    "barrier.arrive",
    "barrier.cta.arrive",
    "barrier.cta.arrive.aligned",
    "bar.red.popc",
    "bar.red.and",
    "bar.red.or",
    "barrier.red.popc.aligned",
    "barrier.red.and.aligned",
    "barrier.red.or.aligned",
    "__nvvm_bar0",
    "__nvvm_bar0_popc",
    "__nvvm_bar0_and",
    "__nvvm_bar0_or",
    "__nvvm_bar_sync_all",
    "__nvvm_barrier_sync",
    "mbarrier.init",
    "mbarrier.arrive",
    "mbarrier.arrive_drop",
    "mbarrier.arrive.expect_tx",
    "mbarrier.expect_tx",
    "mbarrier.complete_tx",
    "mbarrier.try_wait.parity",
    "mbarrier.test_wait.parity",
    "mbarrier.try_wait",
    "mbarrier.test_wait",
    "mbarrier.inval",
    "cluster.sync",
    "barrier.cluster.arrive",
    "barrier.cluster.arrive.aligned",
    "barrier.cluster.arrive.release",
    "barrier.cluster.arrive.release.aligned",
    "barrier.cluster.arrive.relaxed",
    "barrier.cluster.arrive.relaxed.aligned",
    "barrier.cluster.wait",
    "barrier.cluster.wait.aligned",
    "barrier.cluster.wait.acquire",
    "barrier.cluster.wait.acquire.aligned",
    "cluster.barrier_arrive",
    "cluster.barrier_wait",
    "grid.sync",
    "block.sync",
    "block.barrier_arrive",
    "block.barrier_wait",
    "grid.barrier_arrive",
    "grid.barrier_wait",
    "tile.sync",
    "coalesced.sync",
    "membar.cta",
    "membar.gl",
    "membar.sys",
    "fence.acq_rel.cta",
    "fence.acq_rel.cluster",
    "fence.acq_rel.gpu",
    "fence.acq_rel.sys",
    "fence.sc.cta",
    "fence.sc.cluster",
    "fence.sc.gpu",
    "fence.sc.sys",
    "fence.proxy.async",
    "fence.mbarrier_init",
    "__threadfence_block",
    "__threadfence",
    "__threadfence_system",
    "cp.async.bulk",
    "cp.async.bulk.commit_group",
    "cp.async.bulk.wait_group",
    "cp.async.bulk.wait_group.read",
    "memcpy_async",
    "cp.async",
    "cp.async.commit_group",
    "cp.async.wait_group",
    "cp.async.wait_all",
    "cp.async.mbarrier.arrive",
    "cp.async.mbarrier.arrive.noinc",
    "pipeline.producer_acquire",
    "pipeline.producer_commit",
    "pipeline.consumer_wait",
    "pipeline.consumer_release",
    "pipeline.memcpy_async",
    "store",
    "load",
    "read",
    "write",
    "exch",
    "cas",
    "fetch_add",
    "launch",
    "device_sync",
    "stream_query",
];

/// The warp intrinsics with a member mask (`__shfl_sync`, ...): litmus
/// instructions beside [`INSTRUCTION_NAMES`], named once here for the
/// parser, the CUDA emitter and the generators of tests.
pub const WARP_INTRINSICS: &[&str] = &[
    "__shfl_sync",
    "__shfl_up_sync",
    "__shfl_down_sync",
    "__shfl_xor_sync",
    "__ballot_sync",
    "__all_sync",
    "__any_sync",
    "__uni_sync",
    "__match_any_sync",
    "__match_all_sync",
    "__reduce_add_sync",
    "__reduce_min_sync",
    "__reduce_max_sync",
    "__reduce_and_sync",
    "__reduce_or_sync",
    "__reduce_xor_sync",
    "elect.sync",
];

/// Whether `name` is a litmus instruction: one of [`INSTRUCTION_NAMES`] or
/// [`WARP_INTRINSICS`].
pub fn is_instruction(name: &str) -> bool {
    instruction_names().any(|n| n == name)
}

/// Every litmus instruction name: [`INSTRUCTION_NAMES`], then
/// [`WARP_INTRINSICS`].
pub fn instruction_names() -> impl Iterator<Item = &'static str> {
    INSTRUCTION_NAMES.iter().chain(WARP_INTRINSICS).copied()
}

/// Words that start a statement without being instructions.
pub const STATEMENT_KEYWORDS: &[&str] = &["if", "else", "repeat", "while", "goto", "exit", "await"];

/// The instruction or statement keyword closest to `name` by edit distance,
/// when it is close enough to be a likely misspelling (one edit for names
/// of up to 3 characters, else a third of the length, 2 to 3 edits).
pub fn closest_statement(name: &str) -> Option<&'static str> {
    closest(name, instruction_names().chain(STATEMENT_KEYWORDS.iter().copied()))
}

/// The name of `candidates` closest to `name` by edit distance, when it is
/// close enough to be a likely misspelling (none for a one-character
/// name, one edit for names of 2 or 3 characters, else a third of the
/// length, 2 to 3 edits): the "did you mean" of every diagnostic that
/// names something unknown.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let len = name.chars().count();
    // Every one-character name is one edit from every other: no guess.
    if len <= 1 {
        return None;
    }
    let limit = if len <= 3 { 1 } else { (len / 3).clamp(2, 3) };
    candidates
        .into_iter()
        .map(|k| (edit_distance(name, k), k))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, k)| k)
}

/// Every finding kind's name, as `expect` and `--finding` spell it.
pub fn finding_kind_names() -> Vec<String> {
    let mut v: Vec<String> = ["deadlock", "nontermination", "race", "assertion"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    v.extend(UbKind::ALL.iter().map(|k| format!("ub({})", k.name())));
    v
}

/// Levenshtein distance (insertions, deletions and substitutions of chars).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != cb)).min(row[j] + 1).min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_close_names_only() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(
            closest_statement("cluster.barrier_arive"),
            Some("cluster.barrier_arrive")
        );
        assert_eq!(closest_statement("arive"), Some("arrive"));
        assert_eq!(closest_statement("whlie"), Some("while"));
        assert_eq!(closest_statement("s_get_barrier_state"), None);
        let kinds = finding_kind_names();
        assert_eq!(closest("racee", kinds.iter().map(String::as_str)), Some("race"));
        assert_eq!(closest("deadlok", kinds.iter().map(String::as_str)), Some("deadlock"));
        assert_eq!(
            closest("ub(stale-phse)", kinds.iter().map(String::as_str)),
            Some("ub(stale-phase)")
        );
        assert_eq!(closest("barrier", kinds.iter().map(String::as_str)), None);
        assert_eq!(closest_statement("frobnicate"), None);
    }
}
