//! `file:line:col: error: message`, the source line and a caret under the
//! span. Output stays bounded whatever the input: a file shows at most
//! [`MAX_SHOWN`] diagnostics ([`cap`]) and a long line only a window of
//! [`WINDOW`] columns around the caret (docs/reliability.md).

use bc_syntax::{Diagnostic, Severity, SourceFile};
use std::fmt::Write;

/// The most diagnostics a file reports; the rest are counted in one more.
pub const MAX_SHOWN: usize = 50;

/// The most columns of a source line shown under a diagnostic.
pub const WINDOW: usize = 120;

/// Keeps a file's first [`MAX_SHOWN`] diagnostics and replaces the rest
/// with one file-level diagnostic that counts them, so every format (text,
/// JSON, SARIF, JUnit) stays bounded on a file of garbage.
pub fn cap(ds: &mut Vec<Diagnostic>) {
    if ds.len() <= MAX_SHOWN {
        return;
    }
    let rest = ds.split_off(MAX_SHOWN);
    let what = if rest.iter().all(|d| d.severity == Severity::Error) {
        "errors"
    } else {
        "diagnostics"
    };
    ds.push(Diagnostic::file_error(format!(
        "and {} more {what} (only the first {MAX_SHOWN} are shown)",
        rest.len()
    )));
}

pub fn render(file: &SourceFile, d: &Diagnostic) -> String {
    let sev = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let mut out = String::new();
    match d.span {
        None => {
            let _ = writeln!(out, "{}: {sev}: {}", file.name, shorten(&d.message));
        }
        Some(span) => {
            let (lc, end) = file.range(span);
            let _ = writeln!(
                out,
                "{}:{}:{}: {sev}: {}",
                file.name,
                lc.line,
                lc.col,
                shorten(&d.message)
            );
            let line: Vec<char> = file
                .line_text(lc.line)
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            let gutter = lc.line.to_string().len();
            let col = lc.col as usize - 1;
            let width = if end.line == lc.line {
                (end.col.saturating_sub(lc.col)).max(1) as usize
            } else {
                (line.len() + 1).saturating_sub(col).max(1)
            };
            let (shown, caret_at, width) = window(&line, col, width);
            let _ = writeln!(out, "{:gutter$} |", "");
            let _ = writeln!(out, "{} | {}", lc.line, shown);
            let _ = writeln!(out, "{:gutter$} | {}{}", "", " ".repeat(caret_at), "^".repeat(width));
        }
    }
    for n in &d.notes {
        let _ = writeln!(out, "  = note: {}", shorten(n));
    }
    out
}

/// A message that quotes a long piece of the file (an identifier of a
/// thousand characters) keeps its start and end, cut in the middle.
fn shorten(msg: &str) -> std::borrow::Cow<'_, str> {
    let n = msg.chars().count();
    if n <= 2 * WINDOW {
        return msg.into();
    }
    let head: String = msg.chars().take(WINDOW).collect();
    let tail: String = msg.chars().skip(n - WINDOW / 3).collect();
    format!("{head}…{tail}").into()
}

/// The part of a line to show: the whole line when it fits in [`WINDOW`]
/// columns, else a window around the caret (a third before it) with `…`
/// where the line is cut. Returns the text, the caret's column in it and
/// the caret's width (cut at the window's end).
fn window(line: &[char], col: usize, width: usize) -> (String, usize, usize) {
    if line.len() <= WINDOW {
        return (line.iter().collect(), col, width);
    }
    let start = col.saturating_sub(WINDOW / 3).min(line.len() - WINDOW);
    let end = start + WINDOW;
    let mut shown = String::new();
    if start > 0 {
        shown.push('…');
    }
    shown.extend(&line[start..end]);
    if end < line.len() {
        shown.push('…');
    }
    let caret_at = col - start + usize::from(start > 0);
    let width = width.min(end.saturating_sub(col).max(1));
    (shown, caret_at, width)
}

/// Every diagnostic of a file, in order.
pub fn render_all(file: &SourceFile, ds: &[Diagnostic]) -> String {
    ds.iter().map(|d| render(file, d)).collect()
}
