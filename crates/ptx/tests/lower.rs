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
    // The cases pin the addresses of every access: nothing pruned.
    let mut l = bc_ptx::Launch {
        every_access: true,
        ..Default::default()
    };
    let mut it = h.args.iter();
    while let Some(a) = it.next() {
        if a == "--cooperative" {
            l.cooperative = true;
            continue;
        }
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

/// No token soup makes the parser or the lowering panic: random sequences
/// over PTX's tokens (a fixed-seed generator, the same every run).
#[test]
fn random_tokens_do_not_panic() {
    const TOKENS: &[&str] = &[
        ".entry",
        ".func",
        ".visible",
        ".reg",
        ".b32",
        ".u64",
        ".pred",
        ".shared",
        ".param",
        ".target",
        "sm_80",
        "k",
        "(",
        ")",
        "{",
        "}",
        "[",
        "]",
        ",",
        ";",
        ":",
        "@",
        "!",
        "+",
        "-",
        "%r1",
        "%r2",
        "%p1",
        "%tid.x",
        "%rd1",
        "s",
        "L1",
        "L1:",
        "mov.u32",
        "add.s32",
        "setp.lt.s32",
        "bra",
        "bar.sync",
        "bar.arrive",
        "bar.warp.sync",
        "st.shared.u32",
        "ld.shared.u32",
        "atom.add.u32",
        "call",
        "ret",
        "exit",
        "0",
        "1",
        "-1",
        "0x10",
        "0f3F800000",
        "64",
        "\"s\"",
        "// c\n",
        "\n",
        ".loc 1 2 3\n",
        ".maxntid 4, 1, 1",
        "<",
        ">",
    ];
    // Whole statements, so that lowering and the pre-evaluation run.
    const STATEMENTS: &[&str] = &[
        "mov.u32 %r1, %tid.x;",
        "add.s32 %r2, %r1, 1;",
        "setp.lt.u32 %p1, %r2, 2;",
        "@%p1 bra L1;",
        "@!%p1 bra L1;",
        "L1:",
        "bar.sync 0;",
        "bar.sync 1, 2;",
        "bar.arrive 1, 2;",
        "bar.warp.sync -1;",
        "mov.u32 %r3, s;",
        "shl.b32 %r4, %r1, 2;",
        "add.s32 %r3, %r3, %r4;",
        "st.shared.u32 [%r3], %r1;",
        "ld.shared.u32 %r2, [%r3+4];",
        "bar.red.popc.u32 %r2, 0, %p1;",
        "div.s32 %r2, %r1, %r2;",
        "shr.s32 %r2, %r1, %r2;",
        "mov.u32 %r1, %warpid;",
        "ret;",
        "exit;",
        "membar.cta;",
    ];
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let head = ".version 9.5\n.target sm_80\n// barrier-check: --block 2\n.visible .entry k()\n{\n.shared .b8 s[16];\n";
    let mut lowered = 0;
    for round in 0..3000 {
        let n = (next() % 40) as usize;
        let mut text = head.to_string();
        // Every other program is statements only.
        let pool = if round % 2 == 0 { STATEMENTS } else { TOKENS };
        for _ in 0..n {
            text.push_str(pool[(next() % pool.len() as u64) as usize]);
            text.push(' ');
        }
        if next() % 2 == 0 {
            text.push_str("\n}\n");
        }
        if render(&text).contains("threads:") {
            lowered += 1;
        }
    }
    assert!(lowered > 100, "only {lowered} random programs lowered");
}

/// `origin`: each part of the PTX stands for the `.cu` line its `.loc`
/// names, or, for an instruction inlined from a header, the line it was
/// inlined at; a `.loc` of another file stands for no line.
#[test]
fn origin_maps_ptx_to_cuda_lines() {
    let ptx = "\
.visible .entry k()
{
\t.loc\t1 12 5
\tbar.sync 0;
\t.loc\t2 40 3, function_name $L__info_string0, inlined_at 1 14 7
\tst.shared.u32 [%r1], %r2;
\t.loc\t2 41 3
\tret;
}
\t.file\t1 \"/home/u/proj/kernels/k.cu\"
\t.file\t2 \"/usr/include/cooperative_groups.h\"
";
    let cu = SourceFile::new("kernels/k.cu", "line\n".repeat(50));
    let o = bc_ptx::origin(ptx, cu.clone()).expect("k.cu is .file 1");
    let line_of = |needle: &str| o.at(ptx.find(needle).unwrap() as u32).map(|l| (l.line, l.col));
    assert_eq!(line_of("bar.sync"), Some((12, 5)));
    assert_eq!(line_of("st.shared"), Some((14, 7)));
    assert_eq!(line_of("ret;"), None);
    assert_eq!(line_of(".visible"), None);
    // Another file's PTX, or PTX without line information, maps nothing.
    assert!(bc_ptx::origin(ptx, SourceFile::new("other.cu", "")).is_none());
    assert!(bc_ptx::origin("ret;", cu).is_none());
}

/// By default an access is modelled only where its location can race: a
/// plain write of one thread and a plain access of another. Each thread's
/// own global word, and a shared word only read, are left out; the shared
/// word one thread writes and another reads is kept. `every_access`
/// (`--no-prune`) keeps them all.
#[test]
fn pruning_keeps_only_locations_that_can_race() {
    let ptx = "\
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
\t.reg .b32 %r<6>;
\t.reg .b64 %rd<6>;
\t.shared .align 4 .b8 s[16];
\tld.param.u64 %rd1, [k_param_0];
\tcvta.to.global.u64 %rd2, %rd1;
\tmov.u32 %r1, %tid.x;
\tmul.wide.u32 %rd3, %r1, 4;
\tadd.s64 %rd4, %rd2, %rd3;
\tst.global.u32 [%rd4], %r1;
\tmov.u32 %r2, s;
\tld.shared.u32 %r3, [%r2+8];
\tst.shared.u32 [%r2], %r1;
\tret;
}
";
    let (module, diags) = bc_ptx::parse(ptx);
    assert!(diags.is_empty(), "{diags:?}");
    let model = bc_models::lookup("cuda-sm80").unwrap();
    let mut launch = bc_ptx::Launch {
        block: Some([2, 1, 1]),
        ..Default::default()
    };
    let names = |launch: &bc_ptx::Launch| -> Vec<String> {
        let p = bc_ptx::lower_entry(&module, ptx, "k", "k", launch, model.clone()).expect("lowers");
        p.locs.iter().map(|l| l.name.clone()).collect()
    };
    assert_eq!(names(&launch), vec!["s+0"]);
    launch.every_access = true;
    assert_eq!(names(&launch), vec!["param_0+0", "param_0+4", "s+8", "s+0"]);
}

/// Source names of mangled entries: plain and nested (namespaced) names;
/// what is not a plain identifier path stays mangled.
#[test]
fn short_names_of_mangled_entries() {
    for (mangled, short) in [
        ("_Z4tilePfi", "tile"),
        ("_ZN2ns3ownEj", "ns::own"),
        ("_ZN5outer5inner6kernelEv", "outer::inner::kernel"),
        ("_ZN2ns6kernelILi4EEEvPf", "_ZN2ns6kernelILi4EEEvPf"),
        ("_Z9", "_Z9"),
        ("plain", "plain"),
    ] {
        assert_eq!(bc_ptx::short_name(mangled), short, "{mangled}");
    }
    assert!(bc_ptx::entry_matches("_ZN2ns3ownEj", "ns::own"));
    assert!(!bc_ptx::entry_matches("_ZN2ns3ownEj", "own"));
}
