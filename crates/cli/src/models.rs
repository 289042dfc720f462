//! `barrier-check models`: the built-in models, or one model's parameters,
//! barriers and instructions.

use crate::output::{out, usage_error};
use bc_models::Model;
use bc_report::wire;
use std::io;
use std::process::ExitCode;

/// `models` reports in text or JSON.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModelsFormat {
    Text,
    Json,
}

/// `models`' command line.
#[derive(clap::Args)]
pub struct ModelsArgs {
    name: Option<String>,
    /// `json`: the list, or the one model, as a versioned document
    /// (`{"schema": 1, "models": [...]}`, `{"schema": 1, "model": {...}}`).
    #[arg(long, value_enum, default_value = "text")]
    format: ModelsFormat,
}

impl ModelsArgs {
    /// `barrier-check models [NAME]`.
    pub fn run(self) -> io::Result<ExitCode> {
        models(self.name.as_deref(), self.format)
    }
}

/// The list of models, or one model's description.
fn models(name: Option<&str>, format: ModelsFormat) -> io::Result<ExitCode> {
    if format == ModelsFormat::Json {
        return match name {
            None => {
                let mut models: Vec<wire::ModelEntry> = (bc_models::builtin().iter())
                    .map(|m| wire::ModelEntry {
                        name: m.name.clone(),
                        description: m.description.clone(),
                        available: true,
                    })
                    .collect();
                models.extend(bc_models::PLANNED.iter().map(|p| wire::ModelEntry {
                    name: p.to_string(),
                    description: "part of the litmus format; not available in this build yet".into(),
                    available: false,
                }));
                out(&format!(
                    "{}\n",
                    wire::document_json(&wire::ModelList {
                        schema: wire::SCHEMA,
                        models
                    })
                ))?;
                Ok(ExitCode::SUCCESS)
            }
            Some(n) => match bc_models::lookup(n) {
                Ok(m) => {
                    let doc = wire::ModelDocument {
                        schema: wire::SCHEMA,
                        model: model_info(&m),
                    };
                    out(&format!("{}\n", wire::document_json(&doc)))?;
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => usage_error(&e),
            },
        };
    }
    match name {
        None => {
            let mut text = String::new();
            for m in bc_models::builtin().iter() {
                text += &format!("{:<16} {}\n", m.name, m.description);
            }
            for p in bc_models::PLANNED {
                text += &format!("{p:<16} (part of the litmus format; not available in this build yet)\n");
            }
            out(&text)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(n) => match bc_models::lookup(n) {
            Ok(m) => {
                out(&describe_model(&m))?;
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => usage_error(&e),
        },
    }
}

/// `barrier-check models NAME`: the model's parameters, barriers and instructions.
fn describe_model(m: &Model) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "model {}: {}", m.name, m.description);
    let _ = writeln!(out, "warp size: {}", m.warp_size);
    let _ = writeln!(out, "default progress model: {}", m.default_progress);
    let rules: Vec<&str> = bc_models::Rule::ALL
        .into_iter()
        .filter(|r| m.rules.has(*r))
        .map(|r| r.name())
        .collect();
    let _ = writeln!(out, "rules: {}", rules.join(", "));
    let abstract_ops: Vec<&str> = m
        .statements
        .iter()
        .map(String::as_str)
        .filter(|s| m.instruction(s).is_none())
        .collect();
    let _ = writeln!(out, "statements: {}", abstract_ops.join(", "));
    if !m.barriers.is_empty() {
        let _ = writeln!(out, "barriers:");
        for b in &m.barriers {
            let flags = barrier_flags(m, b);
            let flags = if flags.is_empty() {
                String::new()
            } else {
                format!("; {}", flags.join(", "))
            };
            let _ = writeln!(
                out,
                "  {:>3}  {:<15} scope {:<8} count {}{flags}",
                b.id,
                b.name,
                b.scope.name(),
                b.count
            );
        }
    }
    for g in &m.groups {
        let ids: Vec<String> = g.ids.iter().map(|i| i.to_string()).collect();
        let wait = if g.wait_on_joined {
            " (a wait on a member waits on the member joined last)"
        } else {
            ""
        };
        let _ = writeln!(out, "mutually exclusive `{}`: {}{wait}", g.name, ids.join(", "));
    }
    if !m.instructions.is_empty() {
        let _ = writeln!(out, "instructions:");
        for i in &m.instructions {
            let ops: Vec<String> = i
                .operands
                .iter()
                .enumerate()
                .map(|(k, o)| {
                    let opt = if k >= i.operands.len() - i.optional { "?" } else { "" };
                    format!("{}{opt}", operand_names(*o).0)
                })
                .collect();
            let res = if i.result { "r = " } else { "" };
            let sig = format!("{res}{} {}", i.name, ops.join(", "));
            let _ = writeln!(out, "  {:<38} -> {}", sig.trim_end(), i.text);
        }
    }
    let _ = writeln!(
        out,
        "language reference: docs/litmus.md (every statement with an example, the finding kinds, the progress models, the JSON fields)"
    );
    out
}

/// A predefined barrier's properties, in words (both forms).
fn barrier_flags(m: &Model, b: &bc_models::PredefinedBarrier) -> Vec<String> {
    let mut flags = Vec::new();
    if b.props.join_at_launch {
        flags.push("joined at launch".to_string());
    }
    if b.props.drop_at_end {
        flags.push(format!("dropped at {}", m.end_word()));
    }
    if b.props.privileged {
        flags.push("privileged".to_string());
    }
    if b.props.needs_fence {
        flags.push("orders memory only through fences".to_string());
    }
    if b.props.noop {
        flags.push("no-op but join".to_string());
    }
    flags
}

/// An operand kind's placeholder in a signature and its name in JSON.
fn operand_names(o: bc_models::OperandKind) -> (&'static str, &'static str) {
    match o {
        bc_models::OperandKind::Barrier => ("ID", "barrier"),
        bc_models::OperandKind::Int => ("K", "int"),
        bc_models::OperandKind::Object => ("B", "object"),
        bc_models::OperandKind::Reg => ("t", "register"),
    }
}

/// `models NAME --format json`: what `describe_model` prints, as data.
fn model_info(m: &Model) -> wire::ModelInfo {
    wire::ModelInfo {
        name: m.name.clone(),
        description: m.description.clone(),
        warp_size: m.warp_size,
        default_progress: m.default_progress.to_string(),
        rules: (bc_models::Rule::ALL.into_iter())
            .filter(|r| m.rules.has(*r))
            .map(|r| r.name().to_string())
            .collect(),
        statements: (m.statements.iter())
            .filter(|s| m.instruction(s).is_none())
            .cloned()
            .collect(),
        barriers: (m.barriers.iter())
            .map(|b| wire::ModelBarrier {
                id: b.id,
                name: b.name.clone(),
                scope: b.scope.name().to_string(),
                count: b.count.to_string(),
                properties: barrier_flags(m, b),
            })
            .collect(),
        groups: (m.groups.iter())
            .map(|g| wire::ModelGroup {
                name: g.name.clone(),
                ids: g.ids.clone(),
                wait_on_joined: g.wait_on_joined,
            })
            .collect(),
        instructions: (m.instructions.iter())
            .map(|i| wire::ModelInstruction {
                name: i.name.clone(),
                operands: i.operands.iter().map(|o| operand_names(*o).1.to_string()).collect(),
                optional: i.optional,
                result: i.result,
                text: i.text.clone(),
            })
            .collect(),
    }
}
