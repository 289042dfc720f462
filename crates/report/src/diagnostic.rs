//! `file:line:col: error: message`, the source line and a caret under the span.

use bc_syntax::{Diagnostic, Severity, SourceFile};
use std::fmt::Write;

pub fn render(file: &SourceFile, d: &Diagnostic) -> String {
    let sev = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let mut out = String::new();
    match d.span {
        None => {
            let _ = writeln!(out, "{}: {sev}: {}", file.name, d.message);
        }
        Some(span) => {
            let (lc, end) = file.range(span);
            let _ = writeln!(out, "{}:{}:{}: {sev}: {}", file.name, lc.line, lc.col, d.message);
            let line = file.line_text(lc.line);
            let shown: String = line.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
            let gutter = lc.line.to_string().len();
            let width = if end.line == lc.line {
                (end.col.saturating_sub(lc.col)).max(1)
            } else {
                (shown.chars().count() as u32 + 1).saturating_sub(lc.col).max(1)
            };
            let _ = writeln!(out, "{:gutter$} |", "");
            let _ = writeln!(out, "{} | {}", lc.line, shown);
            let _ = writeln!(
                out,
                "{:gutter$} | {}{}",
                "",
                " ".repeat(lc.col as usize - 1),
                "^".repeat(width as usize)
            );
        }
    }
    for n in &d.notes {
        let _ = writeln!(out, "  = note: {n}");
    }
    out
}

/// Every diagnostic of a file, in order.
pub fn render_all(file: &SourceFile, ds: &[Diagnostic]) -> String {
    ds.iter().map(|d| render(file, d)).collect()
}
