//! Every construct of the litmus v1 spec parses; errors carry spans and are
//! all reported; no input makes the parser panic (property tests).

use bc_syntax::{parse, ExprKind, Quantifier, SourceFile, StmtKind, ThreadForm};
use proptest::prelude::*;

/// Every construct the spec's "File structure" and "Statements" sections show.
const EVERYTHING: &str = r#"
litmus "everything"                 # required, first statement
model cuda-sm90
about "free text"
barrier B
barrier C = 4
barrier D = 2 scope=cluster
var x = 0
var s scope=block
var m = -1
thread T0 { arrive B }
thread T1 block=1 cluster=1 warp=0 {
  init B, 2; join B; drop B; arrive B; arrive B, 3; wait B
  t = arrive B
  wait B, t
  arrive_wait B; arrive_drop B
  s_barrier
  s_barrier_signal -1
  r = s_barrier_signal_isfirst -1
  s_barrier_wait -1
  s_barrier_init 3, 2
  s_barrier_join 3
  s_barrier_leave
  __syncthreads
  r = __syncthreads_count p
  r = __syncthreads_and p
  r = __syncthreads_or p
  __syncwarp 0xffffffff
  bar.sync 1, 64
  bar.sync 1
  bar.arrive 1, 64
  mbarrier.init B, 2
  t = mbarrier.arrive B
  mbarrier.arrive_drop B
  mbarrier.expect_tx B, 128
  mbarrier.complete_tx B, 128
  mbarrier.try_wait.parity B, 0
  mbarrier.inval B
  cluster.sync
  t = cluster.barrier_arrive
  cluster.barrier_wait t
  grid.sync
  store x, 1
  r = load x
  await x == 1
  read s
  write s
  r = exch x, 1
  r = cas x, 0, 1
  r = fetch_add x, 1
  r = 3
  r = (r + 1) * 2 - 3 / 1 % 2
  q = r == 1 && !(r != 2) || r < 1 || r <= 1 || r > 1 || r >= 1
  L0: r = exch x, 1
  goto L0
  if r == 0 { goto L0 }
  if tid == 0 { r = 1 } else { r = 2 }
  if tid == 0 { r = 1 } else if tid == 1 { r = 2 } else { r = 3 }
  repeat 3 { r = r + 1 }
  while r < 2 { r = r + 1 }
  exit
  fetch_add x, 1
END:
}
kernel blocks=2 threads=3 cluster_size=1 cooperative { r = tid + bid + warp + lane + ntid }
host H {
  launch K1, stream=0
  device_sync
  stream_query 0
}
kernel K1 blocks=1 threads=1 { r = 1 }
progress obe
expect deadlock, ub(arrive-then-drop), ub(wait-without-join)
assert never T0:r == 1 && T1:r == 1
assert always b0t2:r == 2
assert sometimes K1.b0t0:r == 1 && x == 0
"#;

#[test]
fn every_spec_construct_parses() {
    let (lit, diags) = parse(EVERYTHING);
    assert!(diags.is_empty(), "{diags:#?}");
    assert_eq!(lit.name.as_ref().unwrap().name, "everything");
    assert_eq!(lit.model.as_ref().unwrap().name, "cuda-sm90");
    assert_eq!(lit.barriers.len(), 3);
    assert_eq!(lit.barriers[2].attrs[0].name_value.as_ref().unwrap().name, "cluster");
    assert_eq!(lit.vars[2].init, -1);
    let forms: Vec<ThreadForm> = lit.threads.iter().map(|t| t.form).collect();
    assert_eq!(
        forms,
        [
            ThreadForm::Thread,
            ThreadForm::Thread,
            ThreadForm::Kernel,
            ThreadForm::Host,
            ThreadForm::Kernel
        ]
    );
    assert_eq!(lit.threads[4].name.as_ref().unwrap().name, "K1");
    assert!(lit.threads[2].name.is_none());
    let kinds: Vec<&str> = lit
        .expect
        .as_ref()
        .unwrap()
        .kinds
        .iter()
        .map(|k| k.name.as_str())
        .collect();
    assert_eq!(kinds, ["deadlock", "ub(arrive-then-drop)", "ub(wait-without-join)"]);
    assert_eq!(lit.asserts.len(), 3);
    assert_eq!(lit.asserts[0].quantifier, Quantifier::Never);
    assert_eq!(lit.progress.as_ref().unwrap().name, "obe");
    // The last statement of T1 is the label END standing alone.
    let last = lit.threads[1].body.last().unwrap();
    assert!(matches!(last.kind, StmtKind::Nop));
    assert_eq!(last.labels[0].name, "END");
    // `r = s_barrier_signal_isfirst -1` is an instruction with a result.
    let isfirst = &lit.threads[1]
        .body
        .iter()
        .find(|s| matches!(&s.kind, StmtKind::Instr { name, .. } if name.name == "s_barrier_signal_isfirst"))
        .unwrap();
    if let StmtKind::Instr { dest, args, .. } = &isfirst.kind {
        assert_eq!(dest.as_ref().unwrap().name, "r");
        assert!(matches!(
            args[0],
            bc_syntax::Arg::Expr(bc_syntax::Expr {
                kind: ExprKind::Int(-1),
                ..
            })
        ));
    }
}

#[test]
fn errors_are_all_reported_with_positions() {
    let text = "litmus \"e\"\nmodel amdgpu\nbarrier B = \nthread T0 { arrive B,, ; wait B }\nthread T1 { x = }\nexpect bogus\n";
    let (_, diags) = parse(text);
    let file = SourceFile::new("e.litmus", text);
    let at: Vec<(u32, u32)> = diags
        .iter()
        .map(|d| {
            let lc = file.line_col(d.span.unwrap().start);
            (lc.line, lc.col)
        })
        .collect();
    assert_eq!(at, [(3, 13), (4, 22), (5, 17), (6, 8)], "{diags:#?}");
}

#[test]
fn a_misspelt_finding_kind_gets_the_nearest_one() {
    let (_, d) = parse("litmus \"x\"\nmodel amdgpu\nthread T0 { }\nexpect deadlok, ub(stale-phse), bogus\n");
    let msgs: Vec<&str> = d.iter().map(|d| d.message.as_str()).collect();
    assert!(msgs[0].ends_with("`deadlok` (did you mean `deadlock`?)"), "{msgs:?}");
    assert!(
        msgs.iter().all(|m| !m.contains("bogus") || !m.contains("did you mean")),
        "{msgs:?}"
    );
}

#[test]
fn the_first_statement_must_be_litmus() {
    let (_, d) = parse("model amdgpu\nlitmus \"x\"\n");
    assert!(d[0].message.contains("must start with `litmus"));
    let (_, d) = parse("");
    assert!(d[0].message.contains("empty file"));
    let (_, d) = parse("# only a comment\n");
    assert!(d[0].message.contains("empty file"));
}

#[test]
fn unclosed_braces_and_strings() {
    let (_, d) = parse("litmus \"x\nthread T0 { arrive B\n");
    assert!(d.iter().any(|d| d.message.contains("unterminated string")), "{d:?}");
    let (_, d) = parse("litmus \"x\"\nthread T0 { arrive B\n");
    assert!(d.iter().any(|d| d.message.contains("never closed")), "{d:?}");
}

#[test]
fn hex_and_negative_integers() {
    let (lit, d) = parse("litmus \"x\"\nvar a = 0x10\nvar b = -7\n");
    assert!(d.is_empty());
    assert_eq!((lit.vars[0].init, lit.vars[1].init), (16, -7));
    let (_, d) = parse("litmus \"x\"\nvar a = 99999999999999999999\n");
    assert!(d[0].message.contains("invalid integer"));
}

fn token_soup() -> impl Strategy<Value = String> {
    let tokens = prop::sample::select(vec![
        "litmus", "\"n\"", "model", "amdgpu", "barrier", "B", "=", "2", "-", "var", "x", "thread", "T0", "kernel",
        "host", "{", "}", "(", ")", ",", ":", ";", "\n", "arrive", "wait", "join", "if", "else", "repeat", "while",
        "goto", "L", "exit", "await", "==", "&&", "!", "&", "|", "^", "<<", ">>", "expect", "ub", "assert", "always",
        "r", "0x", "\"", "#", "//", "\\", "\u{fffd}", "é", "\0",
    ]);
    prop::collection::vec(tokens, 0..60).prop_map(|v| v.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig {
        // A fixed seed unless PROPTEST_RNG_SEED names one: the same texts
        // on every run (`just props` draws fresh seeds).
        rng_seed: if std::env::var_os("PROPTEST_RNG_SEED").is_some() {
            ProptestConfig::default().rng_seed
        } else {
            proptest::test_runner::RngSeed::Fixed(0x6261_7272_6965_7221)
        },
        ..ProptestConfig::with_cases(2000)
    })]

    #[test]
    fn never_panics_on_arbitrary_text(s in "\\PC{0,200}") {
        let (_, diags) = parse(&s);
        for d in diags {
            let span = d.span.unwrap();
            prop_assert!(span.start as usize <= s.len() && span.end as usize <= s.len());
        }
    }

    #[test]
    fn never_panics_on_token_soup(s in token_soup()) {
        let (_, diags) = parse(&s);
        let file = SourceFile::new("f", s.clone());
        for d in diags {
            let span = d.span.unwrap();
            prop_assert!(span.end as usize <= s.len());
            let _ = file.line_col(span.start);
        }
    }

    #[test]
    fn truncations_of_a_valid_file_never_panic(cut in 0usize..EVERYTHING.len()) {
        let mut cut = cut;
        while !EVERYTHING.is_char_boundary(cut) { cut -= 1; }
        let _ = parse(&EVERYTHING[..cut]);
    }
}

/// A repeated attribute is an error at the repeat, and only the first value
/// reaches the tree (lowering once panicked on `block=1 block=2`).
#[test]
fn duplicate_attributes_are_errors() {
    let text = "litmus \"d\"\nbarrier B = 1 scope=block scope=cluster\nthread T0 block=1 block=2 { }\nkernel blocks=1 threads=1 blocks=2 cooperative cooperative { }\n";
    let (lit, diags) = parse(text);
    let file = SourceFile::new("d.litmus", text);
    let at: Vec<(u32, u32, &str)> = diags
        .iter()
        .map(|d| {
            let lc = file.line_col(d.span.unwrap().start);
            (lc.line, lc.col, d.message.as_str())
        })
        .collect();
    let dup = |k: &str| format!("duplicate attribute `{k}` (each attribute may be given once)");
    assert_eq!(
        at,
        [
            (2, 27, dup("scope").as_str()),
            (3, 19, dup("block").as_str()),
            (4, 27, dup("blocks").as_str()),
            (4, 48, dup("cooperative").as_str()),
        ]
    );
    assert_eq!(lit.threads[0].attrs.len(), 1);
    assert_eq!(lit.threads[0].attrs[0].value.map(|v| v.0), Some(1));
    assert_eq!(lit.threads[1].attrs.len(), 3);
}

/// After `r =`, a dotted name is an instruction (a register never has a
/// dot), so a misspelt one is a statement that lowering rejects by name.
#[test]
fn a_dotted_name_after_assign_is_an_instruction() {
    let (lit, d) = parse("litmus \"x\"\nthread T0 {\n  t = cluster.barrier_arive\n  r = s_get_barrier_state -1\n}\n");
    assert!(d.is_empty(), "{d:?}");
    match &lit.threads[0].body[0].kind {
        StmtKind::Instr { dest, name, args } => {
            assert_eq!(dest.as_ref().unwrap().name, "t");
            assert_eq!(name.name, "cluster.barrier_arive");
            assert!(args.is_empty());
        }
        k => panic!("{k:?}"),
    }
    assert!(matches!(lit.threads[0].body[1].kind, StmtKind::Assign { .. }));
}

/// A run of characters the lexer does not know is one diagnostic spanning
/// the run (a file of NUL bytes gave one per byte); separate runs stay
/// separate.
#[test]
fn a_run_of_bad_characters_is_one_diagnostic() {
    let text = format!("litmus \"x\"\n{}\n$$ $\n", "\0".repeat(1000));
    let (_, diags) = parse(&text);
    let bad: Vec<_> = diags
        .iter()
        .filter(|d| d.message.contains("unexpected character"))
        .collect();
    assert_eq!(bad.len(), 3, "{bad:?}");
    let span = bad[0].span.unwrap();
    assert_eq!((span.end - span.start) as usize, 1000);
    assert!(
        bad[0].message.starts_with("1000 unexpected characters in a row"),
        "{}",
        bad[0].message
    );
    assert_eq!(bad[1].message, "2 unexpected characters in a row, the first `$`");
    assert_eq!(bad[2].message, "unexpected character `$`");
}

/// Line and column of each error of `text`, with its message.
fn error_places(text: &str) -> Vec<(u32, u32, String)> {
    let (_, diags) = parse(text);
    let file = SourceFile::new("t.litmus", text);
    diags
        .iter()
        .map(|d| {
            let lc = file.line_col(d.span.expect("a position").start);
            (lc.line, lc.col, d.message.clone())
        })
        .collect()
}

/// Nesting is bounded (`MAX_NESTING`): at the bound every shape parses;
/// one level more is one error at the place that passes it, and the rest
/// of the file is still parsed. Far deeper input (which overflowed the
/// stack and aborted the process) gives the same single error.
#[test]
fn nesting_is_bounded() {
    use bc_syntax::MAX_NESTING as N;
    let head = "litmus \"deep\"\nmodel cuda-sm90\n";
    let blocks = |open: &str, n: usize| {
        format!(
            "{head}thread T0 {{\n{}r = 1\n{}}}\nthread T1 {{ r = 2 }}\n",
            format!("{open} {{\n").repeat(n),
            "}\n".repeat(n)
        )
    };
    let block_msg =
        format!("blocks nested too deeply: at most {N} levels of `if`, `else if`, `repeat` and `while` are supported");
    let expr_msg =
        format!("expression nested too deeply: at most {N} levels of operators and parentheses are supported");
    for open in ["if 1", "repeat 2", "while r < 1"] {
        assert_eq!(error_places(&blocks(open, N)), [], "{open}");
        for n in [N + 1, 10_000] {
            // Line 3 opens the thread; the `{` of the (N+1)th block is on line N + 4.
            let col = open.len() as u32 + 2;
            assert_eq!(
                error_places(&blocks(open, n)),
                [(N as u32 + 4, col, block_msg.clone())],
                "{open} {n}"
            );
        }
    }
    let else_ifs = |n: usize| {
        format!(
            "{head}thread T0 {{\nif r == 0 {{ }}{}\n}}\n",
            " else if r == 1 { }".repeat(n)
        )
    };
    // A chain of N `if`s (N - 1 `else if`) is N levels; the `{` of the next
    // passes the bound.
    assert_eq!(error_places(&else_ifs(N - 1)), []);
    let at = 19 * N as u32 + 11;
    for n in [N, 20_000] {
        assert_eq!(error_places(&else_ifs(n)), [(4, at, block_msg.clone())]);
    }
    let exprs = |e: String| format!("{head}thread T0 {{\nr = 1\nr = {e}\n}}\nthread T1 {{ r = 2 }}\n");
    let parens = |n: usize| format!("{}r{}", "(".repeat(n), ")".repeat(n));
    let nots = |n: usize| format!("{}r", "!".repeat(n));
    let negs = |n: usize| format!("{}r", "- ".repeat(n));
    let sum = |n: usize| vec!["r"; n].join(" + ");
    let nested_sum = |n: usize| format!("{}r{}", "r + (".repeat(n), ")".repeat(n));
    // The tree depth: a paren or a unary operator adds one level, a sum of
    // n terms n - 1, the innermost name one. Deeper input is reported where
    // the parser reaches the bound: the first parenthesis or unary operator
    // past it, or the operator whose tree passes it.
    assert_eq!(error_places(&exprs(parens(N - 1))), []);
    assert_eq!(error_places(&exprs(nots(N - 1))), []);
    assert_eq!(error_places(&exprs(negs(N - 1))), []);
    assert_eq!(error_places(&exprs(sum(N))), []);
    assert_eq!(error_places(&exprs(nested_sum(N / 2 - 1))), []);
    let cases: [(String, u32); 8] = [
        (parens(N + 1), 5 + N as u32),
        (parens(5000), 5 + N as u32),
        (nots(N + 1), 5 + N as u32),
        (nots(30_000), 5 + N as u32),
        (negs(N + 1), 5 + 2 * N as u32),
        (sum(N + 1), 4 * N as u32 + 3),
        (sum(40_000), 4 * N as u32 + 3),
        (nested_sum(5000), 5 * N as u32 + 9),
    ];
    for (e, col) in cases {
        let short: String = e.chars().take(12).collect();
        assert_eq!(error_places(&exprs(e)), [(5, col, expr_msg.clone())], "{short}");
    }
}
