//! Forward-progress models ("Forward progress" in the litmus spec): which
//! threads must eventually be scheduled. One typed value, parsed once here,
//! is what the litmus `progress` line, the `--progress` flag and a model
//! file's `progress` key all produce; nothing downstream parses a name.

use std::fmt;

/// Who must eventually be scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Progress {
    /// No guarantee at all.
    Unfair,
    /// Every thread is fair.
    Fair,
    /// The live threads of the lowest-numbered live block are fair.
    Hsa,
    /// Every thread whose block has started is fair (occupancy-bound).
    Obe,
    /// When a block starts, it and every lower-numbered block are fair.
    Lobe,
    /// The union of `hsa` and `obe`.
    HsaObe,
    /// The CUDA execution-model rules.
    Cuda,
}

impl Progress {
    pub const ALL: [Progress; 7] = [
        Progress::Unfair,
        Progress::Fair,
        Progress::Hsa,
        Progress::Obe,
        Progress::Lobe,
        Progress::HsaObe,
        Progress::Cuda,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Progress::Unfair => "unfair",
            Progress::Fair => "fair",
            Progress::Hsa => "hsa",
            Progress::Obe => "obe",
            Progress::Lobe => "lobe",
            Progress::HsaObe => "hsa-obe",
            Progress::Cuda => "cuda",
        }
    }
}

/// A progress model with its fairness: weak, or strong (`-strong` suffix;
/// every name but `cuda` has a strong form).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProgressModel {
    pub kind: Progress,
    pub strong: bool,
}

impl ProgressModel {
    /// Parses `obe`, `obe-strong`, ...; the error names every accepted form.
    pub fn parse(name: &str) -> Result<ProgressModel, String> {
        let (base, strong) = match name.strip_suffix("-strong") {
            Some(b) => (b, true),
            None => (name, false),
        };
        Progress::ALL
            .into_iter()
            .find(|p| p.name() == base && !(strong && *p == Progress::Cuda))
            .map(|kind| ProgressModel { kind, strong })
            .ok_or_else(|| {
                let known: Vec<&str> = Progress::ALL.iter().map(|p| p.name()).collect();
                format!(
                    "unknown progress model `{name}` (known: {}; each but cuda also with -strong)",
                    known.join(", ")
                )
            })
    }

    /// The name as written in a litmus file.
    pub fn name(self) -> String {
        if self.strong {
            format!("{}-strong", self.kind.name())
        } else {
            self.kind.name().to_string()
        }
    }
}

impl fmt::Display for ProgressModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in Progress::ALL {
            for strong in [false, true] {
                let m = ProgressModel { kind: p, strong };
                let parsed = ProgressModel::parse(&m.name());
                if p == Progress::Cuda && strong {
                    assert!(parsed.is_err());
                } else {
                    assert_eq!(parsed, Ok(m));
                }
            }
        }
        for bad in ["OBE", "obe-weak", "", "-strong", "strong", "cuda-strong"] {
            let e = ProgressModel::parse(bad).unwrap_err();
            assert!(
                e.contains("unknown progress model") && e.contains("hsa-obe"),
                "{bad}: {e}"
            );
        }
    }
}
