//! Target models as data. A model says which litmus statements a target
//! provides, which rules are judged, its warp size and default progress
//! model. Models live in `models/*.toml` at the repository root and are
//! embedded here at build time; [`Model::from_toml`] loads an edited copy
//! (`--model-file`). The format is documented in `docs/models.md`.

mod file;

use std::fmt;

/// A rule of the formal model that a model may enable or disable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    /// The first element of every bmo is an init (`ub(uninitialized-barrier)`).
    FirstBmoInit,
    /// Participants of a wait form one contiguous bmo interval of one phase.
    ParticipatesIn,
    /// Waits need a joined-before join; mutually exclusive joins break it.
    JoinedBefore,
    /// Executes-before is acyclic and consistent with every bmo.
    ExecutesBeforeConsistent,
    /// A drop needs a joined-before join (`ub(drop-without-join)`).
    DropNeedsJoin,
    /// A drop must not make the expected count negative.
    DropNotNegative,
    /// An arrive followed by a drop must complete first (`ub(arrive-then-drop)`).
    ArriveThenDrop,
    /// A wait needs a join that executes before a participant (`ub(wait-without-join)`).
    WaitNeedsJoin,
    /// The phase-with rule (`ub(stale-phase)`).
    PhaseWith,
    /// An arrive that sets the expected count must set it above the arrive count.
    ExpectedCountUpdate,
    /// Every wait completes (`deadlock` otherwise).
    WaitCompletes,
}

impl Rule {
    pub const ALL: [Rule; 11] = [
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
        }
    }
    pub fn from_name(s: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|r| r.name() == s)
    }
}

/// The set of enabled rules, as a bitset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct RuleSet(u32);

impl RuleSet {
    pub fn all() -> RuleSet {
        Rule::ALL
            .into_iter()
            .fold(RuleSet::default(), |s, r| s.with(r))
    }
    pub fn with(self, r: Rule) -> RuleSet {
        RuleSet(self.0 | 1 << r as u32)
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
    pub default_progress: String,
    /// Statement names the model provides, sorted.
    pub statements: Vec<String>,
    pub rules: RuleSet,
}

impl Model {
    pub fn provides(&self, statement: &str) -> bool {
        self.statements
            .binary_search_by(|s| s.as_str().cmp(statement))
            .is_ok()
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
pub const BUILTIN_FILES: &[(&str, &str)] =
    &[("amdgpu.toml", include_str!("../../../models/amdgpu.toml"))];

/// Model names the litmus spec defines that this build has no data for yet.
pub const PLANNED: &[&str] = &[
    "amdgpu-gfx11",
    "amdgpu-gfx12",
    "amdgpu-gfx1250",
    "cuda-sm80",
    "cuda-sm90",
];

/// Every built-in model, in file order. The embedded files are tested to
/// parse, so this cannot fail at run time.
pub fn builtin() -> Vec<Model> {
    BUILTIN_FILES
        .iter()
        .map(|(name, text)| {
            Model::from_toml(text).unwrap_or_else(|e| panic!("built-in model {name}: {e}"))
        })
        .collect()
}

/// A built-in model by name, or a message saying why there is none.
pub fn lookup(name: &str) -> Result<Model, String> {
    if let Some(m) = builtin().into_iter().find(|m| m.name == name) {
        return Ok(m);
    }
    if PLANNED.contains(&name) {
        return Err(format!(
            "model `{name}` is part of the litmus format but not available in this build yet"
        ));
    }
    let known: Vec<_> = builtin().into_iter().map(|m| m.name).collect();
    Err(format!(
        "unknown model `{name}` (available: {})",
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

    #[test]
    fn bad_files_are_errors() {
        assert!(Model::from_toml("name = 3").is_err());
        let e = Model::from_toml(
            &BUILTIN_FILES[0]
                .1
                .replace("\"phase-with\"", "\"no-such-rule\""),
        )
        .unwrap_err();
        assert!(e.0.contains("no-such-rule"), "{e}");
        let e =
            Model::from_toml(&BUILTIN_FILES[0].1.replace("\"cas\"", "\"frobnicate\"")).unwrap_err();
        assert!(e.0.contains("frobnicate"), "{e}");
    }

    #[test]
    fn lookup_names() {
        assert!(lookup("amdgpu").is_ok());
        assert!(lookup("cuda-sm90").unwrap_err().contains("not available"));
        assert!(lookup("nope").unwrap_err().contains("unknown model"));
    }
}
