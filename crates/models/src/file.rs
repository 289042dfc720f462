//! The on-disk model format (TOML, `format = 1`) and its translation into
//! the core [`Model`]. Serde types stay in this module.

use crate::target::*;
use crate::{ExclusionGroup, Model, ModelError, ProgressModel, Rule, RuleSet};
use serde::Deserialize;

/// Statement names a model may list: the litmus instructions, and `await`
/// (a spin, which a model may leave out).
fn known_statement(s: &str) -> bool {
    s == "await" || bc_syntax::kinds::is_instruction(s)
}

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
    #[serde(default)]
    max_count: Option<i64>,
    #[serde(default)]
    barrier: Vec<BarrierFile>,
    #[serde(default)]
    group: Vec<GroupFile>,
    #[serde(default)]
    instruction: Vec<InstructionFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BarrierFile {
    id: i64,
    name: String,
    scope: String,
    count: toml::Value,
    #[serde(default)]
    join_at_launch: bool,
    #[serde(default)]
    drop_at_end: bool,
    #[serde(default)]
    privileged: bool,
    #[serde(default)]
    noop: bool,
    #[serde(default)]
    uniform: bool,
    #[serde(default)]
    cooperative: bool,
    #[serde(default = "yes")]
    operand: bool,
    #[serde(default = "yes")]
    orders_memory: bool,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupFile {
    name: String,
    ids: Vec<i64>,
    #[serde(default)]
    wait_on_joined: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InstructionFile {
    name: String,
    #[serde(default)]
    operands: Vec<String>,
    #[serde(default)]
    result: bool,
    lowering: String,
}

fn err<T>(msg: String) -> Result<T, ModelError> {
    Err(ModelError(format!("model file: {msg}")))
}

fn barrier(b: BarrierFile) -> Result<PredefinedBarrier, ModelError> {
    let scope = match Scope::parse(&b.scope) {
        Some(s) => s,
        None => {
            const SCOPES: [&str; 6] = ["thread", "warp", "block", "cluster", "grid", "device"];
            let hint = bc_syntax::kinds::closest(&b.scope, SCOPES)
                .map_or(String::new(), |k| format!(" (did you mean `{k}`?)"));
            return err(format!(
                "barrier {}: unknown scope `{}`{hint}; scopes: {}",
                b.id,
                b.scope,
                SCOPES.join(", ")
            ));
        }
    };
    let count = match &b.count {
        toml::Value::Integer(k) if *k > 0 => LaunchCount::Fixed(*k),
        toml::Value::String(s) if s == "none" => LaunchCount::None,
        toml::Value::String(s) if s == "waves-in-block" => LaunchCount::WavesInBlock,
        toml::Value::String(s) if s == "blocks-in-cluster" => LaunchCount::BlocksInCluster,
        toml::Value::String(s) if s == "threads-in-block" => LaunchCount::WavesInBlock,
        toml::Value::String(s) if s == "threads-in-cluster" => LaunchCount::ThreadsInCluster,
        toml::Value::String(s) if s == "threads-in-grid" => LaunchCount::ThreadsInGrid,
        other => return err(format!("barrier {}: count must be a positive integer, \"none\", \"waves-in-block\", \"threads-in-block\", \"blocks-in-cluster\", \"threads-in-cluster\" or \"threads-in-grid\", found {other}", b.id)),
    };
    Ok(PredefinedBarrier {
        id: b.id,
        name: b.name,
        scope,
        count,
        props: BarrierProps {
            join_at_launch: b.join_at_launch,
            drop_at_end: b.drop_at_end,
            privileged: b.privileged,
            noop: b.noop,
            uniform: b.uniform,
            cooperative: b.cooperative,
            out_of_range: false,
            needs_fence: !b.orders_memory,
            held: false,
            copy_written: false,
        },
        operand: b.operand,
    })
}

/// Parses a lowering such as `arrive $1, $2 isfirst; wait -1`.
fn lowering(
    text: &str,
    operands: &[OperandKind],
    groups: &[ExclusionGroup],
    ids: &[i64],
) -> Result<Vec<LoweredOp>, String> {
    let nops = operands.len();
    let operand = |tok: &str| -> Result<usize, String> {
        let n: usize = tok
            .strip_prefix('$')
            .and_then(|n| n.parse().ok())
            .ok_or(format!("expected an operand `$N`, found `{tok}`"))?;
        if n == 0 || n > nops {
            return Err(format!("operand `{tok}` out of range (the instruction has {nops})"));
        }
        Ok(n - 1)
    };
    let mut out = Vec::new();
    for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let cleaned = part.replace(',', " ");
        let mut words = cleaned.split_whitespace();
        let op = match words.next() {
            Some("init") => AbstractOp::Init,
            Some("join") => AbstractOp::Join,
            Some("drop") => AbstractOp::Drop,
            Some("arrive") => AbstractOp::Arrive,
            Some("arrive_drop") => AbstractOp::ArriveDrop,
            Some("wait") => AbstractOp::Wait,
            Some("expect_tx") => AbstractOp::ExpectTx,
            Some("complete_tx") => AbstractOp::CompleteTx,
            Some("inval") => AbstractOp::Inval,
            other => return Err(format!("unknown abstract operation `{}`", other.unwrap_or(""))),
        };
        let target = words.next().ok_or(format!("`{part}` names no barrier"))?;
        let barrier = if target.starts_with('$') {
            let n = operand(target)?;
            match operands[n] {
                OperandKind::Barrier => BarrierRef::Operand(n),
                OperandKind::Object => BarrierRef::Object(n),
                _ => return Err(format!("operand `{target}` is not a barrier or barrier object")),
            }
        } else if let Some(g) = target.strip_prefix("joined(").and_then(|g| g.strip_suffix(')')) {
            BarrierRef::JoinedInGroup(
                groups
                    .iter()
                    .position(|x| x.name == g)
                    .ok_or(format!("unknown group `{g}`"))?,
            )
        } else {
            let id: i64 = target
                .parse()
                .map_err(|_| format!("expected `$N`, `joined(GROUP)` or a barrier id, found `{target}`"))?;
            if !ids.contains(&id) {
                return Err(format!("barrier id {id} is not a barrier of this model"));
            }
            BarrierRef::Id(id)
        };
        let mut l = LoweredOp {
            op,
            barrier,
            ..LoweredOp::default()
        };
        let arrive = matches!(op, AbstractOp::Arrive | AbstractOp::ArriveDrop);
        let mut seen: Vec<&str> = Vec::new();
        for w in words {
            let (key, val) = match w.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (w, None),
            };
            // A repeated option would silently replace the first one.
            if !key.starts_with('$') {
                if seen.contains(&key) {
                    return Err(format!("`{key}` is given twice in `{part}`"));
                }
                seen.push(key);
            }
            match (key, val) {
                ("isfirst", None) if arrive => l.isfirst = true,
                ("token", None) if arrive => l.token_result = true,
                ("match", None) if op == AbstractOp::Arrive => l.count_match = true,
                ("positive", None) if op == AbstractOp::ArriveDrop => l.positive = true,
                ("mask", Some(v)) if op == AbstractOp::Arrive => l.mask = Some(operand(v)?),
                ("tile", Some(v)) if op == AbstractOp::Arrive => l.tile = Some(operand(v)?),
                ("object", None) if op == AbstractOp::Arrive => l.object = true,
                ("collective", None) if op == AbstractOp::Arrive => l.collective = true,
                ("aligned", None) if matches!(op, AbstractOp::Arrive | AbstractOp::Wait) => l.aligned = true,
                ("relaxed", None) if op == AbstractOp::Arrive => l.relaxed = true,
                ("pred", Some(v)) if arrive => l.pred = Some(operand(v)?),
                ("popc", None) if op == AbstractOp::Wait => l.reduce = Some(Reduce::Popc),
                ("and", None) if op == AbstractOp::Wait => l.reduce = Some(Reduce::And),
                ("or", None) if op == AbstractOp::Wait => l.reduce = Some(Reduce::Or),
                ("value", Some(v)) if op == AbstractOp::Arrive => l.value = Some(operand(v)?),
                ("lane", Some(v)) if op == AbstractOp::Wait => l.lane = Some(operand(v)?),
                ("width", Some(v)) if op == AbstractOp::Wait => l.width = Some(operand(v)?),
                (form, None) if op == AbstractOp::Wait && per_lane_form(form).is_some() => {
                    l.reduce = per_lane_form(form)
                }
                ("token", Some(v)) if op == AbstractOp::Wait => l.token = Some(operand(v)?),
                ("parity", Some(v)) if op == AbstractOp::Wait => l.parity = Some(operand(v)?),
                ("tx", Some(v)) if op == AbstractOp::Arrive => l.tx = Some(operand(v)?),
                ("n", Some(v)) if op == AbstractOp::Arrive => l.arrivals = Some(operand(v)?),
                ("poll", None) if op == AbstractOp::Wait => l.poll = true,
                ("poll", Some("result")) if op == AbstractOp::Wait => l.poll_with_result = true,
                (c, None)
                    if c.starts_with('$')
                        && matches!(
                            op,
                            AbstractOp::Init | AbstractOp::Arrive | AbstractOp::ExpectTx | AbstractOp::CompleteTx
                        )
                        && l.count.is_none() =>
                {
                    l.count = Some(operand(c)?)
                }
                _ => return Err(format!("unexpected `{w}` in `{part}`")),
            }
        }
        if l.arrivals.is_some_and(|n| operands[n] != OperandKind::Int) {
            return Err(format!("`{part}`: the `n=` operand must be an `int` operand"));
        }
        if l.arrivals.is_some() && (l.count_match || l.mask.is_some() || l.tile.is_some()) {
            return Err(format!(
                "`{part}`: `n=` counts arrivals of an object barrier, not of a thread-counted or lane-mask one"
            ));
        }
        if l.mask.is_some() && l.tile.is_some() {
            return Err(format!("`{part}` gives both `mask=` and `tile=`"));
        }
        if l.tile.is_some_and(|n| operands[n] != OperandKind::Int) {
            return Err(format!("`{part}`: the `tile=` operand must be an `int` operand"));
        }
        if matches!(op, AbstractOp::Init | AbstractOp::ExpectTx | AbstractOp::CompleteTx) && l.count.is_none() {
            return Err(format!("`{part}` needs a count operand"));
        }
        out.push(l);
    }
    if out.is_empty() {
        return Err("empty lowering".into());
    }
    Ok(out)
}

/// The wait options of the warp intrinsics (`Reduce::per_lane`).
fn per_lane_form(word: &str) -> Option<Reduce> {
    use crate::target::{ReduxOp, ShflMode};
    Some(match word {
        "shfl_idx" => Reduce::Shfl(ShflMode::Idx),
        "shfl_up" => Reduce::Shfl(ShflMode::Up),
        "shfl_down" => Reduce::Shfl(ShflMode::Down),
        "shfl_bfly" => Reduce::Shfl(ShflMode::Bfly),
        "ballot" => Reduce::Ballot,
        "vote_all" => Reduce::VoteAll,
        "vote_any" => Reduce::VoteAny,
        "vote_uni" => Reduce::VoteUni,
        "match_any" => Reduce::MatchAny,
        "match_all" => Reduce::MatchAll,
        "redux_add" => Reduce::Redux(ReduxOp::Add),
        "redux_min" => Reduce::Redux(ReduxOp::Min),
        "redux_max" => Reduce::Redux(ReduxOp::Max),
        "redux_and" => Reduce::Redux(ReduxOp::And),
        "redux_or" => Reduce::Redux(ReduxOp::Or),
        "redux_xor" => Reduce::Redux(ReduxOp::Xor),
        "elect" => Reduce::Elect,
        _ => return None,
    })
}

/// How many `extends` a model file may chain (a loop is an error, not a
/// hang).
const MAX_EXTENDS: usize = 4;

/// The file's table with what it `extends` merged in: the base's keys, then
/// the file's own over them, where a `[[barrier]]` (by `id`), `[[group]]`
/// (by `name`) or `[[instruction]]` (by `name`) entry naming one of the
/// base's updates that entry key by key and any other is added. A base is a
/// built-in model, by name.
fn resolved(text: &str, depth: usize) -> Result<toml::Table, ModelError> {
    let mut own: toml::Table = toml::from_str(text).map_err(|e| located(text, &e))?;
    let Some(base) = own.remove("extends") else {
        return Ok(own);
    };
    let Some(base) = base.as_str().map(str::to_owned) else {
        return err("`extends` must be a model name".into());
    };
    // The base's name and description would describe another model.
    for key in ["name", "description"] {
        if !own.contains_key(key) {
            return err(format!("a model that `extends` another needs its own `{key}`"));
        }
    }
    if depth >= MAX_EXTENDS {
        return err(format!(
            "`extends = \"{base}\"`: more than {MAX_EXTENDS} models extend one another (a loop?)"
        ));
    }
    let Some((_, base_text)) = crate::BUILTIN_FILES.iter().find(|(_, t)| {
        toml::from_str::<toml::Table>(t).is_ok_and(|t| t.get("name").and_then(|n| n.as_str()) == Some(base.as_str()))
    }) else {
        let known: Vec<String> = crate::builtin_names();
        return err(format!(
            "`extends = \"{base}\"`: no built-in model has that name (built-in: {})",
            known.join(", ")
        ));
    };
    let mut merged = resolved(base_text, depth + 1)?;
    for (key, value) in own {
        let by = match key.as_str() {
            "barrier" => Some("id"),
            "group" | "instruction" => Some("name"),
            _ => None,
        };
        if let (Some(by), toml::Value::Array(entries)) = (by, &value) {
            defined_once(&key, by, entries)?;
        }
        match (by, value, merged.get_mut(&key)) {
            (Some(by), toml::Value::Array(entries), Some(toml::Value::Array(base_entries))) => {
                for entry in entries {
                    let Some(table) = entry.as_table() else {
                        return err(format!("`{key}` entries must be tables"));
                    };
                    let hit = base_entries
                        .iter_mut()
                        .filter_map(toml::Value::as_table_mut)
                        .find(|b| b.get(by).is_some() && b.get(by) == table.get(by));
                    match hit {
                        Some(b) => b.extend(table.clone()),
                        None => base_entries.push(entry),
                    }
                }
            }
            (_, value, _) => {
                merged.insert(key, value);
            }
        }
    }
    Ok(merged)
}

/// Fails when two of a file's own `key` entries have one `by` (a
/// `[[barrier]]` id, a `[[group]]` or `[[instruction]]` name). Merged into
/// a base, the second would silently update the first; in a file that
/// extends nothing, [`parse`] refuses the same duplicate with the same
/// words.
fn defined_once(key: &str, by: &str, entries: &[toml::Value]) -> Result<(), ModelError> {
    let ids: Vec<&toml::Value> = entries.iter().filter_map(|e| e.get(by)).collect();
    let Some(dup) = ids
        .iter()
        .enumerate()
        .find(|(i, v)| ids[..*i].contains(v))
        .map(|(_, v)| v)
    else {
        return Ok(());
    };
    match dup.as_str() {
        Some(name) => err(format!("{key} `{name}` is defined twice")),
        None => err(format!("{key} id {dup} is defined twice")),
    }
}

/// A TOML error of the file's text, with its line and column (1-based,
/// columns in characters) where the parser knows them: `LINE:COL: model
/// file: MESSAGE`, which the command line puts after the file's path.
fn located(text: &str, e: &toml::de::Error) -> ModelError {
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            ModelError(format!("{line}:{col}: model file: {}", e.message().trim_end()))
        }
        None => ModelError(format!("model file: {}", e.message().trim_end())),
    }
}

pub(crate) fn parse(text: &str) -> Result<Model, ModelError> {
    let base = toml::from_str::<toml::Table>(text)
        .ok()
        .and_then(|t| t.get("extends")?.as_str().map(str::to_owned));
    let table = resolved(text, 0)?;
    // Without `extends` the file is its own table: read it from the text,
    // so that an error keeps its place.
    let f: ModelFile = if base.is_none() {
        toml::from_str(text).map_err(|e| located(text, &e))?
    } else {
        ModelFile::deserialize(table).map_err(|e| ModelError(format!("model file: {}", e.message())))?
    };
    if f.format != 1 {
        return Err(ModelError(format!(
            "model file: unsupported format {} (this build reads format 1)",
            f.format
        )));
    }
    if f.warp_size == 0 {
        return Err(ModelError("model file: warp_size must be at least 1".into()));
    }
    if f.name.is_empty() {
        return err("`name` must not be empty".into());
    }
    // The explorer's fair-cycle analysis needs a progress model it knows: an
    // unknown one is an error here, never a silently skipped analysis.
    let default_progress =
        ProgressModel::parse(&f.progress).map_err(|e| ModelError(format!("model file: `progress`: {e}")))?;
    if let Some(m) = f.max_count.filter(|&m| m < 1) {
        return err(format!("max_count must be at least 1, found {m}"));
    }
    let mut statements = f.statements;
    for s in &statements {
        if !known_statement(s) {
            return Err(ModelError(format!("model file: unknown statement `{s}`")));
        }
    }
    statements.sort();
    if let Some(w) = statements.windows(2).find(|w| w[0] == w[1]) {
        return err(format!("statement `{}` is listed twice", w[0]));
    }
    let mut rules = RuleSet::default();
    for r in &f.rules {
        let rule = Rule::from_name(r).ok_or_else(|| ModelError(format!("model file: unknown rule `{r}`")))?;
        if rules.has(rule) {
            return err(format!("rule `{r}` is listed twice"));
        }
        rules = rules.with(rule);
    }
    let barriers: Vec<PredefinedBarrier> = f.barrier.into_iter().map(barrier).collect::<Result<_, _>>()?;
    let ids: Vec<i64> = barriers.iter().map(|b| b.id).collect();
    for (i, id) in ids.iter().enumerate() {
        if ids[..i].contains(id) {
            return err(format!("barrier id {id} is defined twice"));
        }
    }
    let mut groups = Vec::new();
    for g in f.group {
        if let Some(bad) = g.ids.iter().find(|i| !ids.contains(i)) {
            return err(format!("group `{}`: barrier id {bad} is not defined", g.name));
        }
        if let Some((_, dup)) = g.ids.iter().enumerate().find(|(i, id)| g.ids[..*i].contains(id)) {
            return err(format!("group `{}`: barrier id {dup} is listed twice", g.name));
        }
        if groups.iter().any(|x: &ExclusionGroup| x.name == g.name) {
            return err(format!("group `{}` is defined twice", g.name));
        }
        groups.push(ExclusionGroup {
            name: g.name,
            ids: g.ids,
            wait_on_joined: g.wait_on_joined,
        });
    }
    let mut instructions = Vec::new();
    for i in f.instruction {
        if !known_statement(&i.name) {
            return err(format!("unknown instruction `{}`", i.name));
        }
        // A second definition would never be used (lookups take the first).
        if instructions.iter().any(|x: &Instruction| x.name == i.name) {
            return err(format!("instruction `{}` is defined twice", i.name));
        }
        let mut operands = Vec::new();
        let mut optional = 0;
        for o in &i.operands {
            let (kind, opt) = match o.as_str() {
                "barrier" => (OperandKind::Barrier, false),
                "object" => (OperandKind::Object, false),
                "reg" => (OperandKind::Reg, false),
                "int" => (OperandKind::Int, false),
                "int?" => (OperandKind::Int, true),
                other => {
                    return err(format!(
                        "instruction `{}`: unknown operand kind `{other}` (barrier, object, int, int?, reg)",
                        i.name
                    ))
                }
            };
            if opt {
                optional += 1;
            } else if optional > 0 {
                return err(format!("instruction `{}`: optional operands must come last", i.name));
            }
            operands.push(kind);
        }
        let lowered = lowering(&i.lowering, &operands, &groups, &ids)
            .map_err(|e| ModelError(format!("model file: instruction `{}`: {e}", i.name)))?;
        if lowered
            .iter()
            .any(|l| l.isfirst || l.token_result || l.reduce.is_some())
            && !i.result
        {
            return err(format!(
                "instruction `{}`: `isfirst`, `token` and reductions need `result = true`",
                i.name
            ));
        }
        instructions.push(Instruction {
            name: i.name,
            operands,
            optional,
            result: i.result,
            lowering: lowered,
            text: i.lowering,
        });
    }
    for i in &instructions {
        statements.push(i.name.clone());
    }
    statements.sort();
    statements.dedup();
    Ok(Model {
        name: f.name,
        description: f.description,
        warp_size: f.warp_size,
        default_progress,
        statements,
        rules,
        max_count: f.max_count,
        barriers,
        groups,
        instructions,
        base,
    })
}
