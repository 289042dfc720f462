//! The project configuration file, `barrier-check.toml` (or
//! `.barrier-check.toml`), found as ruff finds its own: in the current
//! folder or the nearest folder above it, unless `--config PATH` names one
//! or `--isolated` ignores them all. It gives `check` defaults that its
//! flags override: the model of files without a `model` line, the search
//! limits, the baseline to judge against, and the paths a folder walk
//! leaves out (docs/litmus.md, "Project configuration"); `explain` takes
//! its model and limits, `graph` its model.
//!
//! Paths in the file (`baseline`, `exclude`) are relative to its folder.
//! An unknown key, a value of the wrong type or TOML that does not parse
//! is an input error at its line and column (exit 2), never ignored.

use crate::inputs::{lexical_absolute, Exclude};
use bc_syntax::{Diagnostic, SourceFile, Span};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The file names looked for, in this order, in each folder.
pub const NAMES: &[&str] = &["barrier-check.toml", ".barrier-check.toml"];

/// Configuration files larger than this are refused unread.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The file's keys (kebab-case, as the flags they stand for).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct File {
    model: Option<String>,
    max_states: Option<u64>,
    timeout: Option<f64>,
    max_memory: Option<u64>,
    jobs: Option<u64>,
    baseline: Option<PathBuf>,
    #[serde(default)]
    exclude: Vec<String>,
}

/// A configuration, read and checked.
#[derive(Debug, Default)]
pub struct Config {
    /// The model of files that have no `model` line.
    pub model: Option<bc_models::Model>,
    pub max_states: Option<u64>,
    pub timeout: Option<Duration>,
    pub max_memory: Option<u64>,
    pub jobs: Option<usize>,
    /// The baseline to judge against when neither `--baseline` nor
    /// `--write-baseline` is given (resolved against the file's folder).
    pub baseline: Option<PathBuf>,
    /// Paths a folder walk leaves out.
    pub exclude: Exclude,
}

/// `--config PATH` and `--isolated`, for every command that reads the
/// project configuration (`check`, `explain`, `graph`).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct ConfigArgs {
    /// Read this configuration file instead of the `barrier-check.toml`
    /// (or `.barrier-check.toml`) found in the current folder or the
    /// nearest one above it (docs/litmus.md, "Project configuration").
    #[arg(
        help_heading = "Configuration",
        long,
        value_name = "PATH",
        conflicts_with = "isolated"
    )]
    config: Option<PathBuf>,
    /// Read no configuration file: flags and built-in defaults only.
    #[arg(help_heading = "Configuration", long)]
    isolated: bool,
}

impl ConfigArgs {
    /// The configuration these flags name: the file `--config` gives,
    /// else the one [`discover`] finds, else none (also with
    /// `--isolated`). Errors as [`load`]'s.
    pub fn load(&self) -> Result<Config, String> {
        match (&self.config, self.isolated) {
            (_, true) => Ok(Config::default()),
            (Some(path), false) => load(path),
            (None, false) => discover().map_or_else(|| Ok(Config::default()), |path| load(&path)),
        }
    }
}

/// The configuration file for a run from the current folder: the first of
/// [`NAMES`] in it or the nearest folder above it.
pub fn discover() -> Option<PathBuf> {
    let start = lexical_absolute(Path::new("."));
    start
        .ancestors()
        .flat_map(|d| NAMES.iter().map(move |n| d.join(n)))
        .find(|p| p.is_file())
}

/// Reads and checks the configuration at `path`. Errors are rendered
/// diagnostics (`PATH:LINE:COL: error: ...`, every one at once).
pub fn load(path: &Path) -> Result<Config, String> {
    let name = path.display().to_string();
    let bytes = crate::inputs::read_capped(path, MAX_CONFIG_BYTES).map_err(|e| format!("{name}: {e}"))?;
    let (source, bad) = barrier_check::decode(&name, &bytes);
    if let Some(d) = bad {
        return Err(bc_report::diagnostic::render_all(&source, &[d]));
    }
    let file: File = toml::from_str(&source.text).map_err(|e| {
        let span = e.span().map_or(Span::default(), |r| Span::new(r.start, r.end));
        let d = Diagnostic::error(span, format!("configuration: {}", e.message().trim_end()));
        bc_report::diagnostic::render_all(&source, &[d])
    })?;
    let at = |key: &str| key_span(&source, key);
    let mut errors = Vec::new();
    let root = lexical_absolute(path.parent().unwrap_or(Path::new(".")));
    let mut config = Config {
        max_states: file.max_states,
        max_memory: file.max_memory,
        baseline: file.baseline.map(|b| root.join(b)),
        ..Config::default()
    };
    if let Some(m) = &file.model {
        match bc_models::lookup(m) {
            Ok(m) => config.model = Some(m),
            Err(e) => errors.push(Diagnostic::error(at("model"), e)),
        }
    }
    for (key, zero) in [
        ("max-states", file.max_states == Some(0)),
        ("max-memory", file.max_memory == Some(0)),
        ("jobs", file.jobs == Some(0)),
    ] {
        if zero {
            errors.push(Diagnostic::error(at(key), format!("`{key}` needs at least 1")));
        }
    }
    config.jobs = file.jobs.map(|j| usize::try_from(j).unwrap_or(usize::MAX));
    if let Some(t) = file.timeout {
        match crate::flags::parse_secs(&t.to_string()) {
            Ok(d) => config.timeout = Some(d),
            Err(e) => errors.push(Diagnostic::error(at("timeout"), format!("`timeout` {e}"))),
        }
    }
    let mut patterns = Vec::new();
    for p in &file.exclude {
        match glob::Pattern::new(p) {
            Ok(g) => patterns.push((g, !p.contains('/'))),
            Err(e) => errors.push(Diagnostic::error(
                at("exclude"),
                format!("`exclude` pattern `{p}`: {e}"),
            )),
        }
    }
    config.exclude = Exclude::new(root, patterns);
    if errors.is_empty() {
        Ok(config)
    } else {
        Err(bc_report::diagnostic::render_all(&source, &errors))
    }
}

/// Where `key = ...` is written (its first line that starts with it), for
/// an error about its value.
fn key_span(source: &SourceFile, key: &str) -> Span {
    let mut offset = 0;
    for line in source.text.split_inclusive('\n') {
        let t = line.trim_start();
        if t.strip_prefix(key).is_some_and(|r| r.trim_start().starts_with('=')) {
            let start = offset + (line.len() - t.len());
            return Span::new(start, start + key.len());
        }
        offset += line.len();
    }
    Span::default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclude_matches_names_anywhere_and_paths_from_the_root() {
        let root = PathBuf::from("/p");
        let ex = Exclude::new(
            root,
            ["wip", "litmus/slow/*.litmus", "*-draft.litmus"]
                .iter()
                .map(|p| (glob::Pattern::new(p).unwrap(), !p.contains('/')))
                .collect(),
        );
        assert!(ex.excludes(Path::new("/p/litmus/wip")));
        assert!(ex.excludes(Path::new("/p/a/b/wip")));
        assert!(ex.excludes(Path::new("/p/litmus/slow/x.litmus")));
        assert!(!ex.excludes(Path::new("/p/litmus/slow/deeper/x.litmus")));
        assert!(ex.excludes(Path::new("/p/litmus/cuda/x-draft.litmus")));
        assert!(!ex.excludes(Path::new("/p/litmus/cuda/x.litmus")));
        // Outside the configuration's folder nothing is excluded.
        assert!(!ex.excludes(Path::new("/q/wip")));
    }
}
