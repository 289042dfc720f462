//! Target models as data. A model says which litmus statements a target
//! provides, which rules are judged, its warp size and default progress
//! model. Models live in `models/*.toml` at the repository root and are
//! embedded here at build time; [`Model::from_toml`] loads an edited copy
//! (`--model-file`). The format is documented in `docs/models.md`.

mod file;
mod progress;
mod target;

pub use progress::{Progress, ProgressModel};
pub use target::*;

use bc_syntax::{FindingKind, UbKind};
use std::fmt;

/// A rule of the formal model that a model may enable or disable. Each
/// comment names the source section the rule comes from (the sections of
/// `/work/shared/sources`; "project notes" is the semantics notes file);
/// what a violation reports is [`Rule::finding`], the one place that pairs
/// rules with findings. `docs/ARCHITECTURE.md`, section "Rules", names the
/// function implementing each rule in the rule checker and the explorer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    /// The first element of every bmo is an init ("Execution Model"; CUDA:
    /// project notes section 3, init before any use).
    FirstBmoInit,
    /// Participants of a wait form one contiguous bmo interval of one phase
    /// ("Execution Model", barrier-participates-in; parity, token and
    /// counted waits: project notes section 3).
    ParticipatesIn,
    /// Waits need a joined-before join; mutually exclusive joins break it
    /// ("Execution Model", barrier-joined-before).
    JoinedBefore,
    /// Executes-before is acyclic and consistent with every bmo ("Execution
    /// Model", barrier-executes-before).
    ExecutesBeforeConsistent,
    /// A drop needs a joined-before join ("Execution Model").
    DropNeedsJoin,
    /// A drop must not make the expected count negative ("Execution Model";
    /// "Barrier init": a positive count; an arrive_drop to zero: project
    /// notes section 3).
    DropNotNegative,
    /// An arrive followed by a drop must complete first ("Execution Model";
    /// "Informational Notes").
    ArriveThenDrop,
    /// A wait needs a join that executes before a participant ("Execution
    /// Model").
    WaitNeedsJoin,
    /// A wait's participants are of the phase it is with ("Execution
    /// Model", barrier-phase-with).
    PhaseWith,
    /// An arrive that sets the expected count must set it above the arrive
    /// count ("Execution Model", "Barrier arrive").
    ExpectedCountUpdate,
    /// Every wait completes ("Informational Notes"; parity waits: project
    /// notes section 3).
    WaitCompletes,
    /// Privileged (trap) barriers are not used ("Barrier Implementations on
    /// AMDGPU Targets", GFX12).
    PrivilegedBarrier,
    /// Arrivals of one phase of a counted barrier use one count (project
    /// notes section 3, named barriers).
    CountMismatch,
    /// Counts stay within the model's maximum, `max_count`
    /// (cuda-barrier-libcudacxx.txt, `cuda::barrier::max()`).
    CountOverflow,
    /// Uniform barriers: one instruction site, reached by the whole scope
    /// (CUDA guide, "Synchronization Functions").
    DivergentBarrier,
    /// A token wait names the current or the previous phase (CUDA guide,
    /// "Memory Barrier Primitives API", `__mbarrier_test_wait`).
    TokenPhase,
    /// A token is waited on once, on its own barrier
    /// (cuda-barrier-libcudacxx.txt).
    TokenMisuse,
    /// A thread whose arrive completed a phase waits before arriving again
    /// (project notes section 3, `cuda::barrier`).
    ArriveBeforeWait,
    /// Grid-wide barriers need a cooperative launch (CUDA guide, "Grid
    /// Synchronization").
    CooperativeGridSync,
    /// `__syncwarp` masks contain the caller and agree within a phase (CUDA
    /// guide, "Synchronization Functions").
    SyncwarpMask,
    /// No use after `inval` (CUDA guide, "Memory Barrier Primitives API",
    /// `__mbarrier_inval`).
    InvalidBarrier,
    /// A thread arrives at most once in one phase of a thread-counted
    /// barrier (project notes section 3, named barriers).
    ArriveTwice,
    /// An `.aligned` barrier instruction is executed by every thread of a
    /// warp together: the warp's threads in one phase arrive through one
    /// instruction (PTX ISA, `barrier{.cta}`: the `.aligned` modifier;
    /// issue 18's reading, per warp).
    AlignedBarrier,
    /// Every asynchronous copy's completion is observed: some wait of a
    /// thread of the program is ordered after it before the program ends
    /// (CUDA guide, "Using TMA to transfer one-dimensional arrays": the
    /// kernel waits at its end for the copy to be done with shared
    /// memory; issue 18's reading, docs/semantics.md).
    CopyNotWaited,
    /// A wait or poll on a barrier comes after an init of it (CUDA guide,
    /// "Initialization": before any thread can participate in a
    /// `cuda::barrier` it must be initialized; an mbarrier poll reads the
    /// barrier's state, which only an init defines). Waits are no bmo
    /// elements, so `first-bmo-init` does not see them; the AMDGPU formal
    /// model leaves them out, so this is CUDA model data (issue 32,
    /// points 6 and 11).
    WaitAfterInit,
    /// One phase of a CTA barrier is reached through barrier instructions
    /// that may not be mixed there (PTX ISA, `barrier{.cta}`): different
    /// warps may run different forms on one barrier, but a reduction
    /// (`bar.red`) is not intermixed with a sync or an arrive on the same
    /// active barrier ("unpredictable"), and the lanes of one warp at a
    /// form counted in whole warps reach it through one kind of
    /// instruction and one barrier (docs/semantics.md, "A warp counts
    /// whole"; the device hangs, completes or faults by the shape of the
    /// split: docs/hardware.md, session 40).
    BarrierForms,
}

impl Rule {
    pub const ALL: [Rule; 26] = [
        Rule::FirstBmoInit,
        Rule::ParticipatesIn,
        Rule::JoinedBefore,
        Rule::ExecutesBeforeConsistent,
        Rule::DropNeedsJoin,
        Rule::DropNotNegative,
        Rule::ArriveThenDrop,
        Rule::WaitNeedsJoin,
        Rule::PhaseWith,
        Rule::ExpectedCountUpdate,
        Rule::WaitCompletes,
        Rule::PrivilegedBarrier,
        Rule::CountMismatch,
        Rule::CountOverflow,
        Rule::DivergentBarrier,
        Rule::TokenPhase,
        Rule::TokenMisuse,
        Rule::ArriveBeforeWait,
        Rule::CooperativeGridSync,
        Rule::SyncwarpMask,
        Rule::InvalidBarrier,
        Rule::ArriveTwice,
        Rule::AlignedBarrier,
        Rule::CopyNotWaited,
        Rule::WaitAfterInit,
        Rule::BarrierForms,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Rule::FirstBmoInit => "first-bmo-init",
            Rule::ParticipatesIn => "participates-in",
            Rule::JoinedBefore => "joined-before",
            Rule::ExecutesBeforeConsistent => "executes-before-consistent",
            Rule::DropNeedsJoin => "drop-needs-join",
            Rule::DropNotNegative => "drop-not-negative",
            Rule::ArriveThenDrop => "arrive-then-drop",
            Rule::WaitNeedsJoin => "wait-needs-join",
            Rule::PhaseWith => "phase-with",
            Rule::ExpectedCountUpdate => "expected-count-update",
            Rule::WaitCompletes => "wait-completes",
            Rule::PrivilegedBarrier => "privileged-barrier",
            Rule::CountMismatch => "count-mismatch",
            Rule::CountOverflow => "count-overflow",
            Rule::DivergentBarrier => "divergent-barrier",
            Rule::TokenPhase => "token-phase",
            Rule::TokenMisuse => "token-misuse",
            Rule::ArriveBeforeWait => "arrive-before-wait",
            Rule::CooperativeGridSync => "uncooperative-grid-sync",
            Rule::SyncwarpMask => "syncwarp-mask",
            Rule::InvalidBarrier => "invalid-barrier",
            Rule::ArriveTwice => "arrive-twice",
            Rule::AlignedBarrier => "aligned-barrier",
            Rule::CopyNotWaited => "copy-not-waited",
            Rule::WaitAfterInit => "wait-after-init",
            Rule::BarrierForms => "barrier-forms",
        }
    }
    pub fn from_name(s: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|r| r.name() == s)
    }

    /// The finding a violation of the rule reports: `None` for the
    /// structural rules, whose violation means the execution was built
    /// wrongly (an internal error, never a user finding). This is the one
    /// place that pairs rules with findings; a finding may have several
    /// rules (`ub(stale-phase)`: `phase-with` and `token-phase`).
    pub fn finding(self) -> Option<FindingKind> {
        let ub = match self {
            Rule::ParticipatesIn | Rule::JoinedBefore | Rule::ExecutesBeforeConsistent => return None,
            Rule::WaitCompletes => return Some(FindingKind::Deadlock),
            Rule::FirstBmoInit => UbKind::UninitializedBarrier,
            Rule::DropNeedsJoin => UbKind::DropWithoutJoin,
            Rule::DropNotNegative => UbKind::NegativeExpectedCount,
            Rule::ArriveThenDrop => UbKind::ArriveThenDrop,
            Rule::WaitNeedsJoin => UbKind::WaitWithoutJoin,
            Rule::PhaseWith => UbKind::StalePhase,
            Rule::ExpectedCountUpdate => UbKind::ExpectedCountTooSmall,
            Rule::PrivilegedBarrier => UbKind::PrivilegedBarrier,
            Rule::CountMismatch => UbKind::CountMismatch,
            Rule::CountOverflow => UbKind::CountOverflow,
            Rule::DivergentBarrier => UbKind::DivergentBarrier,
            Rule::TokenPhase => UbKind::StalePhase,
            Rule::TokenMisuse => UbKind::TokenMisuse,
            Rule::ArriveBeforeWait => UbKind::ArriveBeforeWait,
            Rule::CooperativeGridSync => UbKind::UncooperativeGridSync,
            Rule::SyncwarpMask => UbKind::SyncwarpMask,
            Rule::InvalidBarrier => UbKind::InvalidBarrier,
            Rule::ArriveTwice => UbKind::ArriveTwice,
            Rule::AlignedBarrier => UbKind::DivergentBarrier,
            Rule::CopyNotWaited => UbKind::CopyNotWaited,
            Rule::WaitAfterInit => UbKind::UninitializedBarrier,
            Rule::BarrierForms => UbKind::DivergentBarrier,
        };
        Some(FindingKind::Ub(ub))
    }
}

/// The set of enabled rules, as a bitset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct RuleSet(u32);

impl RuleSet {
    pub fn all() -> RuleSet {
        Rule::ALL.into_iter().fold(RuleSet::default(), |s, r| s.with(r))
    }
    pub fn with(self, r: Rule) -> RuleSet {
        RuleSet(self.0 | 1 << r as u32)
    }
    pub fn without(self, r: Rule) -> RuleSet {
        RuleSet(self.0 & !(1 << r as u32))
    }
    pub fn has(self, r: Rule) -> bool {
        self.0 & (1 << r as u32) != 0
    }
}

/// One target model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Model {
    pub name: String,
    pub description: String,
    pub warp_size: u32,
    pub default_progress: ProgressModel,
    /// Statement names the model provides, sorted.
    pub statements: Vec<String>,
    pub rules: RuleSet,
    /// The largest expected count a barrier may have (`ub(count-overflow)`).
    pub max_count: Option<i64>,
    /// Barrier objects the target predefines.
    pub barriers: Vec<PredefinedBarrier>,
    /// Groups of barrier-mutually-exclusive predefined barriers.
    pub groups: Vec<ExclusionGroup>,
    /// Target instructions and their lowerings.
    pub instructions: Vec<Instruction>,
    /// The built-in model this one `extends` (a variant: another reading
    /// of the same target).
    pub base: Option<String>,
}

/// Barriers that are pairwise barrier-mutually-exclusive: joining one ends
/// joined-before for the others.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExclusionGroup {
    pub name: String,
    pub ids: Vec<i64>,
    /// A wait on a member waits on the member the thread joined last,
    /// whatever its operand says (gfx1250 named barriers).
    pub wait_on_joined: bool,
}

impl Model {
    /// Whether a barrier thread count counts whole warps: a positive
    /// multiple of a warp size above one. At an `.aligned` arrive a warp's
    /// arrival then weighs the warp size whatever its live lanes (PTX ISA,
    /// `barrier{.cta}`; docs/semantics.md, "A warp counts whole").
    pub fn counts_whole_warps(&self, count: i64) -> bool {
        let ws = i64::from(self.warp_size);
        ws > 1 && count > 0 && count % ws == 0
    }

    pub fn provides(&self, statement: &str) -> bool {
        self.statements.binary_search_by(|s| s.as_str().cmp(statement)).is_ok()
    }
    pub fn instruction(&self, name: &str) -> Option<&Instruction> {
        self.instructions.iter().find(|i| i.name == name)
    }
    pub fn barrier(&self, id: i64) -> Option<&PredefinedBarrier> {
        self.barriers.iter().find(|b| b.id == id)
    }

    /// Whether the model is a CUDA target's (its name, or the built-in
    /// model it extends, is `cuda-...`): reports then say "thread exit"
    /// where the AMDGPU models' words are "wave end".
    pub fn is_cuda(&self) -> bool {
        self.name.starts_with("cuda") || self.base.as_deref().is_some_and(|b| b.starts_with("cuda"))
    }

    /// What a thread's end is called in reports: "thread exit" for CUDA,
    /// "wave end" for AMDGPU (the formal model's word).
    pub fn end_word(&self) -> &'static str {
        if self.is_cuda() {
            "thread exit"
        } else {
            "wave end"
        }
    }

    /// Parses a model file; errors are messages about the file as a whole.
    pub fn from_toml(text: &str) -> Result<Model, ModelError> {
        file::parse(text)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelError(pub String);

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The model files built into the binary: (file name, text).
pub const BUILTIN_FILES: &[(&str, &str)] = &[
    ("amdgpu.toml", include_str!("../../../models/amdgpu.toml")),
    ("amdgpu-gfx11.toml", include_str!("../../../models/amdgpu-gfx11.toml")),
    ("amdgpu-gfx12.toml", include_str!("../../../models/amdgpu-gfx12.toml")),
    (
        "amdgpu-gfx1250.toml",
        include_str!("../../../models/amdgpu-gfx1250.toml"),
    ),
    ("cuda-sm80.toml", include_str!("../../../models/cuda-sm80.toml")),
    ("cuda-sm90.toml", include_str!("../../../models/cuda-sm90.toml")),
    (
        "cuda-sm90-nofence.toml",
        include_str!("../../../models/cuda-sm90-nofence.toml"),
    ),
];

/// The names of the built-in models, read from their files' `name` keys
/// (without building the models: a file that `extends` another asks for
/// them while the models are being built).
pub(crate) fn builtin_names() -> Vec<String> {
    BUILTIN_FILES
        .iter()
        .filter_map(|(_, t)| {
            let t: toml::Table = toml::from_str(t).ok()?;
            t.get("name")?.as_str().map(str::to_owned)
        })
        .collect()
}

/// Model names the litmus spec defines that this build has no data for yet.
pub const PLANNED: &[&str] = &[];

/// Built-in models that provide `statement`, by name (variants left out:
/// they provide what their base does).
pub fn models_providing(statement: &str) -> Vec<String> {
    builtin()
        .iter()
        .filter(|m| m.base.is_none() && m.provides(statement))
        .map(|m| m.name.clone())
        .collect()
}

/// Built-in models that predefine barrier `id`, by name (variants left
/// out).
pub fn models_with_barrier(id: i64) -> Vec<String> {
    builtin()
        .iter()
        .filter(|m| m.base.is_none() && m.barrier(id).is_some())
        .map(|m| m.name.clone())
        .collect()
}

/// Every built-in model, in file order, parsed once. The embedded files are
/// tested to parse, so this cannot fail at run time.
pub fn builtin() -> &'static [Model] {
    static MODELS: std::sync::OnceLock<Vec<Model>> = std::sync::OnceLock::new();
    MODELS.get_or_init(|| {
        BUILTIN_FILES
            .iter()
            .map(|(name, text)| Model::from_toml(text).unwrap_or_else(|e| panic!("built-in model {name}: {e}")))
            .collect()
    })
}

/// A built-in model by name, or a message saying why there is none.
/// The built-in model whose name is nearest to `name`, when it is close
/// enough to be a likely misspelling (`bc_syntax::kinds::closest`).
pub fn closest_builtin(name: &str) -> Option<&'static str> {
    bc_syntax::kinds::closest(name, builtin().iter().map(|m| m.name.as_str()))
}

pub fn lookup(name: &str) -> Result<Model, String> {
    if let Some(m) = builtin().iter().find(|m| m.name == name) {
        return Ok(m.clone());
    }
    if PLANNED.contains(&name) {
        return Err(format!(
            "model `{name}` is part of the litmus format but not available in this build yet"
        ));
    }
    let known: Vec<_> = builtin().iter().map(|m| m.name.as_str()).collect();
    let hint = closest_builtin(name)
        .map(|k| format!("did you mean `{k}`? "))
        .unwrap_or_default();
    Err(format!(
        "unknown model `{name}` ({hint}available: {})",
        known.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_models_parse() {
        let ms = builtin();
        assert_eq!(ms[0].name, "amdgpu");
        assert!(ms[0].provides("arrive"));
        assert!(!ms[0].provides("s_barrier"));
        assert!(ms[0].rules.has(Rule::PhaseWith));
    }

    /// Every ub kind is some rule's finding (a kind no rule reports could
    /// never be found), and the two rules of `ub(stale-phase)` share it.
    #[test]
    fn every_ub_kind_has_a_rule() {
        for k in UbKind::ALL {
            assert!(
                Rule::ALL.iter().any(|r| r.finding() == Some(FindingKind::Ub(k))),
                "{k:?} has no rule"
            );
        }
        assert_eq!(Rule::PhaseWith.finding(), Rule::TokenPhase.finding());
        assert_eq!(Rule::WaitCompletes.finding(), Some(FindingKind::Deadlock));
    }

    /// An unknown model's name gets the nearest built-in one.
    #[test]
    fn unknown_models_get_the_nearest_name() {
        let e = lookup("cuda-sm9").unwrap_err();
        assert!(e.contains("(did you mean `cuda-sm90`? available: amdgpu, "), "{e}");
        let e = lookup("nvidia").unwrap_err();
        assert!(e.contains("(available: amdgpu, "), "{e}");
    }

    /// A TOML error keeps its line and column: a syntax error, and a value
    /// of the wrong type in a file without `extends`.
    #[test]
    fn model_file_errors_keep_their_place() {
        let e = Model::from_toml("format = 1\nname = \"x\"\nstatements = [\"arrive\",\n").unwrap_err();
        assert!(e.0.starts_with("4:1: model file: "), "{e}");
        let e = Model::from_toml("format = 1\nname = \"x\"\nwarp_size = \"wide\"\n").unwrap_err();
        assert!(e.0.starts_with("3:13: model file: "), "{e}");
    }

    /// A barrier's unknown scope names the nearest one and lists them all.
    #[test]
    fn model_file_scopes_get_suggestions() {
        let text = include_str!("../../../models/cuda-sm80.toml").replacen("scope = \"block\"", "scope = \"blok\"", 1);
        let e = Model::from_toml(&text).unwrap_err();
        assert!(
            e.0.contains(
                "unknown scope `blok` (did you mean `block`?); scopes: thread, warp, block, cluster, grid, device"
            ),
            "{e}"
        );
    }

    /// `extends`: the variant changes what it names and nothing else;
    /// its errors are reported at load.
    #[test]
    fn extending_files_update_their_base() {
        let base = lookup("cuda-sm90").unwrap();
        let nofence = lookup("cuda-sm90-nofence").unwrap();
        assert_eq!(
            (nofence.statements.clone(), nofence.rules),
            (base.statements.clone(), base.rules)
        );
        assert_eq!(nofence.barriers.len(), base.barriers.len());
        for (b, n) in base.barriers.iter().zip(&nofence.barriers) {
            assert!(!b.props.needs_fence);
            let fenced = (0..=15).contains(&b.id);
            assert_eq!(n.props.needs_fence, fenced, "barrier {}", b.id);
            let mut n = n.clone();
            n.props.needs_fence = false;
            assert_eq!(&n, b);
        }
        let file = |body: &str| Model::from_toml(&format!("format = 1\n{body}"));
        let own = "extends = \"cuda-sm90\"\nname = \"x\"\ndescription = \"y\"\n";
        let m = file(&format!("{own}warp_size = 16\n[[barrier]]\nid = -12\ncount = 4")).unwrap();
        assert_eq!((m.name.as_str(), m.warp_size), ("x", 16));
        assert_eq!(m.barrier(-12).unwrap().count, LaunchCount::Fixed(4));
        for (body, msg) in [
            (
                "extends = \"nope\"\nname = \"x\"\ndescription = \"y\"",
                "no built-in model",
            ),
            ("extends = \"cuda-sm90\"\ndescription = \"y\"", "its own `name`"),
            ("extends = 3\nname = \"x\"\ndescription = \"y\"", "must be a model name"),
            (
                &format!("{own}[[barrier]]\nid = 99\norders_memory = false"),
                "missing field",
            ),
            (&format!("{own}[[barrier]]\nid = 0\norders_memory = 3"), "invalid type"),
        ] {
            let e = file(body).unwrap_err();
            assert!(e.0.contains(msg), "{body}: {e}");
        }
    }

    #[test]
    fn bad_files_are_errors() {
        assert!(Model::from_toml("name = 3").is_err());
        let e = Model::from_toml(&BUILTIN_FILES[0].1.replace("\"phase-with\"", "\"no-such-rule\"")).unwrap_err();
        assert!(e.0.contains("no-such-rule"), "{e}");
        let e = Model::from_toml(&BUILTIN_FILES[0].1.replace("\"cas\"", "\"frobnicate\"")).unwrap_err();
        assert!(e.0.contains("frobnicate"), "{e}");
    }

    /// Every value that would change what is checked is validated when the
    /// file is loaded: an unknown progress model used to load and then
    /// silently switch the fair-cycle analysis off.
    #[test]
    fn every_model_file_error_is_reported_at_load() {
        let amd = BUILTIN_FILES[0].1;
        assert!(amd.contains("progress = \"obe\""));
        for (from, to, msg) in [
            (
                "progress = \"obe\"",
                "progress = \"OBE\"",
                "unknown progress model `OBE`",
            ),
            (
                "progress = \"obe\"",
                "progress = \"cuda-strong\"",
                "unknown progress model",
            ),
            (
                "progress = \"obe\"",
                "progress = \"obe\"\nmax_count = 0",
                "max_count must be at least 1",
            ),
            ("progress = \"obe\"", "progress = \"obe\"\nfrobnicate = 1", "frobnicate"),
            ("\"phase-with\",", "\"phase-with\", \"phase-with\",", "listed twice"),
            ("\"cas\",", "\"cas\", \"cas\",", "listed twice"),
            ("name = \"amdgpu\"", "name = \"\"", "must not be empty"),
        ] {
            assert!(amd.contains(from), "{from}");
            let e = Model::from_toml(&amd.replacen(from, to, 1)).unwrap_err();
            assert!(e.0.contains(msg), "{to}: {e}");
        }
        assert_eq!(
            Model::from_toml(amd).unwrap().default_progress,
            ProgressModel {
                kind: Progress::Obe,
                strong: false
            }
        );
    }

    #[test]
    fn lookup_names() {
        assert!(lookup("amdgpu").is_ok());
        assert!(lookup("cuda-sm90").is_ok());
        assert!(lookup("amdgpu-gfx1250").is_ok());
        assert!(lookup("nope").unwrap_err().contains("unknown model"));
    }
}

#[cfg(test)]
mod target_tests {
    use super::*;

    #[test]
    fn targets_are_data() {
        let g11 = lookup("amdgpu-gfx11").unwrap();
        assert_eq!(g11.barriers.len(), 1);
        assert!(g11.provides("s_barrier") && !g11.provides("s_barrier_signal"));
        let g12 = lookup("amdgpu-gfx12").unwrap();
        assert!(g12.barrier(-2).unwrap().props.privileged);
        assert!(g12.barrier(-3).is_none());
        let g125 = lookup("amdgpu-gfx1250").unwrap();
        assert_eq!(g125.barriers.len(), 5 + 16);
        assert_eq!(g125.groups[0].ids.len(), 17);
        assert!(g125.barrier(0).unwrap().props.noop);
        assert_eq!(g125.barrier(-3).unwrap().count, LaunchCount::BlocksInCluster);
        let leave = g125.instruction("s_barrier_leave").unwrap();
        assert_eq!(leave.lowering[0].barrier, BarrierRef::JoinedInGroup(0));
        assert_eq!(models_providing("s_barrier_init"), ["amdgpu-gfx1250"]);
        assert_eq!(models_with_barrier(-2), ["amdgpu-gfx12", "amdgpu-gfx1250"]);
    }

    #[test]
    fn bad_lowerings_are_errors() {
        let base = "format = 1\nname = \"x\"\ndescription = \"d\"\nwarp_size = 1\nprogress = \"obe\"\nstatements = []\nrules = []\n[[barrier]]\nid = -1\nname = \"wg\"\nscope = \"block\"\ncount = 2\n";
        let with = |ins: &str| Model::from_toml(&format!("{base}[[instruction]]\n{ins}"));
        assert!(with("name = \"s_barrier\"\nlowering = \"arrive -1; wait -1\"").is_ok());
        for (bad, msg) in [
            ("name = \"s_barrier\"\nlowering = \"arrive -5\"", "not a barrier"),
            (
                "name = \"s_barrier\"\nlowering = \"frob -1\"",
                "unknown abstract operation",
            ),
            ("name = \"s_barrier_signal\"\nlowering = \"arrive $1\"", "out of range"),
            (
                "name = \"s_barrier_signal\"\noperands = [\"barrier\"]\nlowering = \"arrive $1 isfirst\"",
                "need `result = true`",
            ),
            (
                "name = \"s_barrier_init\"\noperands = [\"barrier\"]\nlowering = \"init $1\"",
                "needs a count",
            ),
            (
                "name = \"s_barrier_leave\"\nlowering = \"drop joined(nope)\"",
                "unknown group",
            ),
            ("name = \"nope\"\nlowering = \"arrive -1\"", "unknown instruction"),
            (
                "name = \"s_barrier_signal_isfirst\"\nresult = true\nlowering = \"arrive -1 isfirst isfirst\"",
                "given twice",
            ),
            (
                "name = \"s_barrier\"\nlowering = \"arrive -1\"\n[[instruction]]\nname = \"s_barrier\"\nlowering = \"wait -1\"",
                "defined twice",
            ),
        ] {
            let e = with(bad).unwrap_err();
            assert!(e.0.contains(msg), "{bad}: {e}");
        }
    }
    /// A file that `extends` a model merges its entries into the base's by
    /// id or name, and merged two of its own of one id or name silently
    /// (the second's keys over the first's): within the file itself every
    /// duplicate is an error, as it is in a file that extends nothing.
    #[test]
    fn a_duplicate_in_an_extending_file_is_an_error() {
        let head = "format = 1\nextends = \"cuda-sm90\"\nname = \"x\"\ndescription = \"d\"\n";
        let with = |body: &str| Model::from_toml(&format!("{head}{body}"));
        assert!(with("[[barrier]]\nid = 0\norders_memory = false\n").is_ok());
        for (body, msg) in [
            (
                "[[barrier]]\nid = 0\norders_memory = false\n[[barrier]]\nid = 0\nuniform = true\n",
                "barrier id 0 is defined twice",
            ),
            (
                "[[barrier]]\nid = 99\nname = \"a\"\nscope = \"block\"\ncount = 2\n[[barrier]]\nid = 99\nname = \"b\"\nscope = \"block\"\ncount = 2\n",
                "barrier id 99 is defined twice",
            ),
            (
                "[[instruction]]\nname = \"bar.sync\"\nlowering = \"arrive 0; wait 0\"\n[[instruction]]\nname = \"bar.sync\"\nlowering = \"wait 0\"\n",
                "instruction `bar.sync` is defined twice",
            ),
            (
                "[[group]]\nname = \"g\"\nids = [1]\n[[group]]\nname = \"g\"\nids = [2]\n",
                "group `g` is defined twice",
            ),
        ] {
            let e = with(body).unwrap_err();
            assert!(e.0.contains(msg), "{body}: {e}");
        }
    }
}
