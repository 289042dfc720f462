//! The examples of the language reference, `docs/litmus.md`, are tests:
//! every ```` ```litmus ```` block there must be a complete file that
//! parses, carries an `expect` line and reaches exactly that verdict, so the
//! reference cannot drift away from what the checker does.

use barrier_check::{check_bytes, CheckOptions};
use std::path::Path;

/// The ```` ```litmus ```` blocks of `text`, each with the line its first
/// line has in the file.
fn litmus_blocks(text: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        match &mut open {
            None if line.trim_end() == "```litmus" => open = Some((i + 2, String::new())),
            None => {}
            Some(_) if line.starts_with("```") => blocks.extend(open.take()),
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    assert!(open.is_none(), "an unclosed ```litmus block");
    blocks
}

#[test]
fn every_example_of_the_language_reference_has_its_stated_verdict() {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/litmus.md"));
    let text = std::fs::read_to_string(path).expect("docs/litmus.md");
    let blocks = litmus_blocks(&text);
    assert!(blocks.len() >= 20, "only {} examples found", blocks.len());
    let mut failures = Vec::new();
    for (line, body) in &blocks {
        let name = format!("docs/litmus.md:{line}");
        let r = check_bytes(&name, body.as_bytes(), &CheckOptions::default());
        if r.is_error() {
            let errors = bc_report::diagnostic::render_all(&r.source, &r.diagnostics);
            failures.push(format!("{name}: does not check:\n{errors}"));
        } else if r.expected.is_none() {
            failures.push(format!("{name}: an example must state its verdict with `expect`"));
        } else if !r.pass() {
            let got = bc_report::verdict_text(&r.verdict());
            failures.push(format!("{name}: verdict {got}, not the one its `expect` states"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
