//! Data-driven tests of the PTX front end: every `tests/cases/*.ptx` is
//! parsed and each entry lowered under the launch its header gives
//! (`// barrier-check: --block 4 --param 0=3`); the snapshot is either the
//! lowered program (its locations and each instruction of each body) or
//! every diagnostic with its line and column.

use bc_syntax::{Diagnostic, SourceFile};
use std::fmt::Write;
use std::path::Path;

fn launch(text: &str) -> bc_ptx::Launch {
    let h = bc_ptx::header(text);
    let mut l = bc_ptx::Launch::default();
    let mut it = h.args.iter();
    while let Some(a) = it.next() {
        // A cut header (no_input_panics) loses flags; the cases have whole ones.
        let Some(v) = it.next() else { break };
        match a.as_str() {
            "--block" => l.block = bc_ptx::parse_dims(v).ok(),
            "--grid" => l.grid = bc_ptx::parse_dims(v).ok(),
            "--param" => {
                if let Ok((n, x)) = bc_ptx::parse_param(v) {
                    l.params.insert(n, x);
                }
            }
            _ => {}
        }
    }
    l
}

fn diags(src: &SourceFile, ds: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in ds {
        match d.span {
            Some(s) => {
                let lc = src.line_col(s.start);
                writeln!(out, "{}:{}: error: {}", lc.line, lc.col, d.message).unwrap();
            }
            None => writeln!(out, "error: {}", d.message).unwrap(),
        }
        for n in &d.notes {
            writeln!(out, "  note: {n}").unwrap();
        }
    }
    out
}

fn render(text: &str) -> String {
    let src = SourceFile::new("case.ptx", text);
    let (module, ds) = bc_ptx::parse(text);
    if !ds.is_empty() {
        return format!("parse errors:\n{}", diags(&src, &ds));
    }
    let model = match bc_ptx::model_for_target(&module) {
        Ok(m) => bc_models::lookup(m).unwrap(),
        Err(d) => return diags(&src, &[d]),
    };
    let mut out = String::new();
    for e in bc_ptx::entries(&module) {
        writeln!(out, "entry {e} (model {}):", model.name).unwrap();
        match bc_ptx::lower_entry(&module, text, &format!("case::{e}"), e, &launch(text), model.clone()) {
            Err(ds) => out.push_str(&diags(&src, &ds)),
            Ok(p) => {
                writeln!(out, "  threads: {}", p.threads.len()).unwrap();
                let locs: Vec<&str> = p.locs.iter().map(|l| l.name.as_str()).collect();
                writeln!(out, "  locations: {}", locs.join(", ")).unwrap();
                for (k, c) in p.codes.iter().enumerate() {
                    writeln!(out, "  code {k}:").unwrap();
                    for (pc, i) in c.instrs.iter().enumerate() {
                        let line = src.line_col(i.span.start).line;
                        writeln!(out, "    {pc:3} L{line:<3} {:<40} {:?}", i.text, i.kind).unwrap();
                    }
                }
            }
        }
    }
    out
}

#[test]
fn cases() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        insta::assert_snapshot!(name, render(&text));
    }
}

/// No input makes the parser or the lowering panic: every prefix of every
/// case, and every case with one byte removed.
#[test]
fn no_input_panics() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    for e in std::fs::read_dir(&dir).unwrap() {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
        let mut cuts: Vec<String> = (0..text.len())
            .step_by(7)
            .filter_map(|k| text.get(..k).map(str::to_string))
            .collect();
        cuts.extend(
            (0..text.len())
                .step_by(11)
                .filter_map(|k| Some(format!("{}{}", text.get(..k)?, text.get(k + 1..)?))),
        );
        for t in cuts {
            let _ = render(&t);
        }
    }
}
