//! Metamorphic property test: `await x OP v` is a spin loop, so replacing
//! every `await` by the load loop `Lk: rk = load x; if !(rk OP v) { goto Lk }`
//! (fresh label and register) must never change a verdict, under every
//! progress model, weak and strong (docs/semantics.md, "Termination and
//! forward progress": strong fairness is per transition, and the loop's
//! states differ from the await's only in its register, which no step
//! reads before overwriting it). Random small programs - explicit threads in
//! one or two blocks doing stores, atomics, awaits and barrier operations,
//! straight, in `repeat` loops or in loops that run until a flag is set;
//! the CUDA ones in one cluster, with exits, cluster syncs and re-inits of
//! a token barrier -
//! are checked in both forms; when both searches finish, the verdicts must
//! agree. Most searches must finish (a search that stops at its limit is
//! not compared).

/// The allocator the shipped binary uses (`src/main.rs`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use barrier_check::{check_bytes, CheckOptions};
use bc_explore::{Limits, SearchOptions, Stop};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// One thread: its block, its statements, and how they loop.
#[derive(Clone, Debug)]
struct Thread {
    block: u8,
    stmts: Vec<&'static str>,
    /// 0: straight; 1: `repeat 2`; 2: until `g` is set (unbounded).
    shape: u8,
}

#[derive(Clone, Debug)]
struct Case {
    cuda: bool,
    count: u8,
    threads: Vec<Thread>,
}

const AMD: &[&str] = &[
    "await f == 1",
    "await g != 0",
    "await f >= 1",
    "await f == 0",
    "store f, 1",
    "store f, 0",
    "store g, 1",
    "r = exch f, 0",
    "r = load g",
    "arrive_wait B",
    "arrive B",
    "wait B",
];

const CUDA: &[&str] = &[
    "await f == 1",
    "await g != 0",
    "await f >= 1",
    "await f == 0",
    "store f, 1",
    "store f, 0",
    "store g, 1",
    "r = exch f, 0",
    "__syncthreads",
    "bar.sync 1, 2",
    "arrive_wait B",
    // Both blocks share one cluster (see `render`): exits release the
    // cluster barrier, and tokens of a re-initialized barrier go stale.
    "cluster.sync",
    "exit",
    "t = arrive B; wait B, t",
    "init B, 1",
];

fn thread(cuda: bool) -> impl Strategy<Value = Thread> {
    let stmts = if cuda { CUDA } else { AMD };
    (0u8..2, prop::collection::vec(prop::sample::select(stmts), 1..4), 0u8..3)
        .prop_map(|(block, stmts, shape)| Thread { block, stmts, shape })
}

fn case() -> impl Strategy<Value = Case> {
    prop::bool::weighted(0.25).prop_flat_map(|cuda| {
        (prop::collection::vec(thread(cuda), 2..4), 1u8..3).prop_map(move |(threads, count)| Case {
            cuda,
            count,
            threads,
        })
    })
}

/// The statement, with an `await` written as its load loop when `loops`.
fn render_stmt(stmt: &str, loops: bool, fresh: &mut u32) -> String {
    match stmt.strip_prefix("await ") {
        Some(cond) if loops => {
            let (loc, rest) = cond.split_once(' ').expect("`await x OP v`");
            let k = *fresh;
            *fresh += 1;
            format!("AW{k}: aw{k} = load {loc}; if !(aw{k} {rest}) {{ goto AW{k} }}")
        }
        _ => stmt.to_string(),
    }
}

fn render(c: &Case, progress: &str, loops: bool) -> String {
    let model = if c.cuda { "cuda-sm90" } else { "amdgpu" };
    let mut s = format!(
        "litmus \"m\"\nmodel {model}\nprogress {progress}\nbarrier B = {}\nvar f = 0\nvar g = 0\n",
        c.count
    );
    for (i, t) in c.threads.iter().enumerate() {
        let mut fresh = 0;
        let inner: Vec<String> = t.stmts.iter().map(|st| render_stmt(st, loops, &mut fresh)).collect();
        let inner = inner.join("; ");
        let body = match t.shape {
            0 => inner,
            1 => format!("repeat 2 {{ {inner} }}"),
            _ => format!("W: {inner}; u = load g; if u == 0 {{ goto W }}"),
        };
        let join = if c.cuda { "" } else { "join B; " };
        let cluster = if c.cuda { " cluster=0" } else { "" };
        s += &format!("thread T{i} block={}{cluster} {{ {join}{body} }}\n", t.block);
    }
    s
}

fn run(text: &str) -> Option<bc_explore::Outcome> {
    let opts = CheckOptions {
        search: SearchOptions {
            limits: Limits {
                states: 2_000,
                ..Limits::default()
            },
            ..SearchOptions::default()
        },
        ..CheckOptions::default()
    };
    check_bytes("m.litmus", text.as_bytes(), &opts).outcome
}

const PROGRESS: &[&str] = &["unfair", "fair", "hsa", "obe", "lobe", "hsa-obe"];

#[test]
fn awaits_and_their_load_loops_agree() {
    // More cases for a deeper local run: METAMORPHIC_CASES=1000.
    let cases = std::env::var("METAMORPHIC_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(50);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let compared = std::cell::Cell::new(0u32);
    let total = std::cell::Cell::new(0u32);
    runner
        .run(&case(), |c| {
            let mut models: Vec<String> = PROGRESS
                .iter()
                .flat_map(|p| [p.to_string(), format!("{p}-strong")])
                .collect();
            if c.cuda {
                models.push("cuda".into());
            }
            // The searches of one case run side by side (each is single
            // threaded; CI has two cores and this is its longest test), and
            // are judged in model order as before.
            let results: Vec<(String, String, Option<bc_explore::Outcome>, Option<bc_explore::Outcome>)> =
                std::thread::scope(|scope| {
                    let handles: Vec<_> = models
                        .iter()
                        .map(|progress| {
                            let (awaits, loops) = (render(&c, progress, false), render(&c, progress, true));
                            scope.spawn(move || {
                                let (a, l) = (run(&awaits), run(&loops));
                                (awaits, loops, a, l)
                            })
                        })
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| h.join().expect("a search panicked"))
                        .collect()
                });
            for (awaits, loops, a, l) in results {
                let (Some(a), Some(l)) = (a, l) else {
                    return Err(TestCaseError::fail(format!("does not check:\n{awaits}\n{loops}")));
                };
                total.set(total.get() + 1);
                if a.stop == Stop::Exhausted && l.stop == Stop::Exhausted {
                    compared.set(compared.get() + 1);
                    prop_assert_eq!(
                        a.verdict(),
                        l.verdict(),
                        "await form:\n{}\nloop form:\n{}",
                        awaits,
                        loops
                    );
                }
            }
            Ok(())
        })
        .unwrap();
    // The comparison means something only when most searches finish.
    eprintln!("{} of {} searches finished in both forms", compared.get(), total.get());
    assert!(
        compared.get() * 10 >= total.get() * 7,
        "only {} of {} searches finished in both forms",
        compared.get(),
        total.get()
    );
}
