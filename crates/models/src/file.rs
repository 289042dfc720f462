//! The on-disk model format (TOML, `format = 1`) and its translation into
//! the core [`Model`]. Serde types stay in this module.

use crate::{Model, ModelError, Rule, RuleSet};
use serde::Deserialize;

/// Statement names every model may list (the litmus v1 statement vocabulary
/// that is not control flow).
const KNOWN_STATEMENTS: &[&str] = &[
    "init",
    "join",
    "drop",
    "arrive",
    "wait",
    "arrive_wait",
    "arrive_drop",
    "store",
    "load",
    "await",
    "read",
    "write",
    "exch",
    "cas",
    "fetch_add",
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
    "mbarrier.init",
    "mbarrier.arrive",
    "mbarrier.arrive_drop",
    "mbarrier.expect_tx",
    "mbarrier.complete_tx",
    "mbarrier.try_wait.parity",
    "mbarrier.inval",
    "cluster.sync",
    "cluster.barrier_arrive",
    "cluster.barrier_wait",
    "grid.sync",
    "launch",
    "device_sync",
    "stream_query",
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelFile {
    format: u32,
    name: String,
    description: String,
    warp_size: u32,
    progress: String,
    statements: Vec<String>,
    rules: Vec<String>,
}

pub(crate) fn parse(text: &str) -> Result<Model, ModelError> {
    let f: ModelFile =
        toml::from_str(text).map_err(|e| ModelError(format!("model file: {}", e.message())))?;
    if f.format != 1 {
        return Err(ModelError(format!(
            "model file: unsupported format {} (this build reads format 1)",
            f.format
        )));
    }
    if f.warp_size == 0 {
        return Err(ModelError(
            "model file: warp_size must be at least 1".into(),
        ));
    }
    let mut statements = f.statements;
    for s in &statements {
        if !KNOWN_STATEMENTS.contains(&s.as_str()) {
            return Err(ModelError(format!("model file: unknown statement `{s}`")));
        }
    }
    statements.sort();
    statements.dedup();
    let mut rules = RuleSet::default();
    for r in &f.rules {
        let rule = Rule::from_name(r)
            .ok_or_else(|| ModelError(format!("model file: unknown rule `{r}`")))?;
        rules = rules.with(rule);
    }
    Ok(Model {
        name: f.name,
        description: f.description,
        warp_size: f.warp_size,
        default_progress: f.progress,
        statements,
        rules,
    })
}
