//! `barrier-check models`: the built-in models, or one model's parameters,
//! barriers and instructions.

use crate::output::{out, usage_error};
use bc_models::Model;
use std::io;
use std::process::ExitCode;

/// `models`' command line.
#[derive(clap::Args)]
pub struct ModelsArgs {
    name: Option<String>,
}

impl ModelsArgs {
    /// `barrier-check models [NAME]`.
    pub fn run(self) -> io::Result<ExitCode> {
        models(self.name.as_deref())
    }
}

/// The list of models, or one model's description.
fn models(name: Option<&str>) -> io::Result<ExitCode> {
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
            let mut flags = Vec::new();
            if b.props.join_at_launch {
                flags.push("joined at launch");
            }
            let dropped = format!("dropped at {}", m.end_word());
            if b.props.drop_at_end {
                flags.push(&dropped);
            }
            if b.props.privileged {
                flags.push("privileged");
            }
            if b.props.needs_fence {
                flags.push("orders memory only through fences");
            }
            if b.props.noop {
                flags.push("no-op but join");
            }
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
                    match o {
                        bc_models::OperandKind::Barrier => format!("ID{opt}"),
                        bc_models::OperandKind::Int => format!("K{opt}"),
                        bc_models::OperandKind::Object => format!("B{opt}"),
                        bc_models::OperandKind::Reg => format!("t{opt}"),
                    }
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
