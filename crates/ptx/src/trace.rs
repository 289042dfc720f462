//! The pre-evaluation: every thread of the launch runs the classified
//! code once, here, with the values the checker knows (its place,
//! constants, `--param` values and what it computes from them) and
//! unknown values for everything else. Loaded values are unknown, so a
//! thread's path depends on its place alone and this run sees exactly the
//! instructions, addresses and barrier operands the explorer will. It
//! records them per instruction, and reports every unknown value that
//! reaches a branch, a guard of an access or barrier, an address or a
//! barrier operand: those are never guessed (docs/ptx.md, "Unknown
//! values").

use crate::ops::{apply, CInstr, MemKind, Op, PExpr};
use bc_syntax::{Diagnostic, Op as BOp, SourceFile, Span};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Instructions one thread may run before the search refuses the kernel.
pub const MAX_STEPS: u64 = 1_000_000;
/// Instructions all threads together may run (the pre-evaluation stays
/// within seconds; a kernel that needs more is far beyond what the
/// explorer could search anyway).
pub const MAX_TOTAL_STEPS: u64 = 50_000_000;

/// A location: a region and a byte offset into it.
pub type LocKey = (usize, i64);

/// A memory region: a variable or a pointer parameter's buffer.
#[derive(Clone, Debug)]
pub struct Region {
    pub name: String,
    pub base: i64,
    /// Its size, when known (a dynamic `extern .shared` array has none).
    pub size: Option<u64>,
    pub shared: bool,
    pub span: Span,
}

/// The largest size assumed for a shared region of unknown size (a
/// dynamic `extern .shared` array; a block has at most 228 KiB), and the
/// spacing of shared regions.
pub const REGION_STRIDE: i64 = 1 << 20;

/// The spacing of global regions (variables, `.const` variables, pointer
/// parameters' buffers), and the size assumed for one of unknown size (a
/// pointer parameter's buffer): 64 GiB, more than any GPU holds.
pub const GLOBAL_STRIDE: i64 = 1 << 36;

/// What the threads did at one instruction.
#[derive(Clone, Debug, Default)]
pub struct Site {
    pub visited: bool,
    /// Memory: per address, the locations of its elements.
    pub addrs: BTreeMap<i64, Vec<LocKey>>,
    /// Barriers: the values of the constant operand, and of the count.
    pub sels: BTreeSet<i64>,
    pub counts: BTreeSet<i64>,
    /// Executed with its guard true at least once.
    pub executed: bool,
    /// Per thread (by index in the grid, ascending) that executed it, the
    /// address or constant barrier operand it used, while each thread
    /// used one value only (`place_varies` says otherwise): the choice is
    /// then a function of the thread's place.
    pub place: Vec<(u64, i64)>,
    pub place_varies: bool,
    /// An atomic access whose address or guard was unknown on some visit:
    /// it is left out (atomics never race and their values are not
    /// tracked, so no verdict depends on it).
    pub dropped: bool,
}

/// Notes thread `g`'s value; a second, different value of the same thread
/// marks the list as varying.
fn note<T: PartialEq>(list: &mut Vec<(u64, T)>, varies: &mut bool, g: u64, v: T) {
    match list.last() {
        Some((h, w)) if *h == g => {
            if *w != v {
                *varies = true;
            }
        }
        _ => list.push((g, v)),
    }
}

#[derive(Clone, Copy, Debug)]
enum V {
    K(i64, bool),
    /// Unknown, made so at this instruction (`usize::MAX`: never written).
    U(usize),
}

const NEVER: usize = usize::MAX;

pub struct Trace {
    pub sites: Vec<Site>,
    /// The locations that can take part in a race: a thread writes them
    /// with a plain store and another thread accesses them with a plain
    /// access. No other location can change a verdict (values are not
    /// tracked, and the race rule reads plain accesses only), so the
    /// emitter leaves every access of the others out.
    pub racy: std::collections::HashSet<LocKey>,
    pub diags: Vec<Diagnostic>,
    /// The deadline passed before every thread ran (`--timeout`).
    pub timed_out: bool,
}

/// Instructions between two looks at the clock.
const CLOCK_EVERY: u64 = 1 << 16;

/// Runs every thread (`threads` per block, `blocks` blocks).
pub fn trace(
    code: &[CInstr],
    labels: &HashMap<String, usize>,
    nregs: usize,
    regions: &[Region],
    (blocks, threads): (u64, u64),
    source: &SourceFile,
    deadline: Option<std::time::Instant>,
) -> Trace {
    let mut t = Tracer {
        code,
        labels,
        regions,
        source,
        sites: vec![Site::default(); code.len()],
        errors: BTreeMap::new(),
        g: 0,
        total: 0,
        deadline,
        timed_out: false,
        uses: HashMap::new(),
    };
    'all: for b in 0..blocks {
        for tid in 0..threads {
            t.g = b * threads + tid;
            t.thread(nregs, b as i64, tid as i64);
            if t.errors.len() >= 20 || t.total > MAX_TOTAL_STEPS || t.timed_out {
                break 'all;
            }
        }
    }
    let racy = t.uses.iter().filter(|(_, u)| u.racy()).map(|(l, _)| *l).collect();
    Trace {
        sites: t.sites,
        racy,
        diags: t.errors.into_values().collect(),
        timed_out: t.timed_out,
    }
}

struct Tracer<'a> {
    code: &'a [CInstr],
    labels: &'a HashMap<String, usize>,
    regions: &'a [Region],
    source: &'a SourceFile,
    sites: Vec<Site>,
    errors: BTreeMap<usize, Diagnostic>,
    /// The running thread's index in the grid.
    g: u64,
    /// Instructions run by all threads so far.
    total: u64,
    deadline: Option<std::time::Instant>,
    timed_out: bool,
    /// Per location, its plain writers and plain accessors (threads by
    /// grid index; the first two distinct of each are enough).
    uses: HashMap<LocKey, LocUse>,
}

/// The first two distinct threads that write a location with a plain
/// store, and that access it with a plain access.
#[derive(Default)]
struct LocUse {
    writers: [Option<u64>; 2],
    users: [Option<u64>; 2],
}

impl LocUse {
    fn add(list: &mut [Option<u64>; 2], g: u64) {
        match *list {
            [None, _] => list[0] = Some(g),
            [Some(a), None] if a != g => list[1] = Some(g),
            _ => {}
        }
    }

    /// A plain write and a plain access of another thread.
    fn racy(&self) -> bool {
        match self.writers {
            [Some(_), Some(_)] => true,
            [Some(w), None] => self.users.iter().flatten().any(|&u| u != w),
            _ => false,
        }
    }
}

impl Tracer<'_> {
    fn eval(&self, e: &PExpr, env: &[V], pc: usize, place: (i64, i64)) -> V {
        match e {
            PExpr::Int(v) => V::K(*v, false),
            PExpr::Ptr(v) => V::K(*v, true),
            PExpr::Reg(r) => env[*r],
            PExpr::Builtin(b) => V::K(
                match *b {
                    "tid" => place.1,
                    "bid" => place.0,
                    _ => place.1 % 32,
                },
                false,
            ),
            PExpr::Unknown => V::U(pc),
            PExpr::Un(op, x) => match self.eval(x, env, pc, place) {
                V::K(v, p) => V::K(apply(*op, 0, v), p),
                u => u,
            },
            PExpr::Bin(op, a, b) => match (self.eval(a, env, pc, place), self.eval(b, env, pc, place)) {
                // PTX leaves a quotient or remainder by zero unspecified:
                // unknown, never the 0 the evaluator would give.
                (V::K(_, _), V::K(0, _)) if matches!(op, BOp::Div | BOp::Rem) => V::U(pc),
                // Two guessed buffer addresses combined (a sum, a
                // difference): the value depends on the guess.
                (V::K(_, true), V::K(_, true)) => V::U(pc),
                (V::K(x, p), V::K(y, q)) => V::K(apply(*op, x, y), p || q),
                (V::U(o), _) | (_, V::U(o)) => V::U(o),
            },
        }
    }

    /// The value of a barrier's operand `e` (`what`: its name in the
    /// message); `None` when it is unknown or computed from a pointer
    /// parameter's guessed address, after failing the instruction
    /// (inconclusive).
    fn barrier_operand(&mut self, e: &PExpr, env: &[V], pc: usize, place: (i64, i64), what: &str) -> Option<i64> {
        match self.eval(e, env, pc, place) {
            V::K(_, true) => {
                let why = format!("{what} is computed from a pointer parameter (pass `--param` if it is an integer)");
                self.fail(pc, &why, V::K(0, false), place);
                None
            }
            V::K(v, false) => Some(v),
            u => {
                self.fail(pc, what, u, place);
                None
            }
        }
    }

    fn line(&self, s: Span) -> u32 {
        self.source.line_col(s.start).line
    }

    /// An instruction's text, one space between its parts, without `;`.
    fn text(&self, s: Span) -> String {
        let t = self.source.text.get(s.start as usize..s.end as usize).unwrap_or("");
        let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
        t.trim_end_matches(';').trim_end().to_string()
    }

    /// Why a value is unknown: the instruction that made it so.
    fn origin(&self, o: usize) -> (String, Option<String>) {
        if o == NEVER {
            return ("a register no instruction wrote before".into(), None);
        }
        let c = &self.code[o];
        (
            format!("`{}` (line {})", self.text(c.span), self.line(c.span)),
            c.note.clone(),
        )
    }

    fn fail(&mut self, pc: usize, what: &str, why: V, thread: (i64, i64)) {
        if self.errors.contains_key(&pc) {
            return;
        }
        let span = self.code[pc].span;
        let mut d = match why {
            V::U(o) => {
                let (from, note) = self.origin(o);
                let mut d = Diagnostic::error(
                    span,
                    format!("inconclusive: {what} depends on an unknown value, from {from}"),
                );
                if let Some(n) = note {
                    d = d.with_note(n);
                }
                d
            }
            V::K(..) => Diagnostic::error(span, format!("inconclusive: {what}")),
        };
        d = d.with_note(format!(
            "first seen in thread b{}t{}; the checker never guesses a value that steers control flow, an address or a barrier (docs/ptx.md, \"Unknown values\")",
            thread.0, thread.1
        ));
        self.errors.insert(pc, d);
    }

    fn resolve(&self, a: i64) -> Option<LocKey> {
        self.regions.iter().enumerate().find_map(|(k, r)| {
            let size = r
                .size
                .map_or(if r.shared { REGION_STRIDE } else { GLOBAL_STRIDE }, |s| s as i64);
            (a >= r.base && a < r.base + size).then_some((k, a - r.base))
        })
    }

    fn thread(&mut self, nregs: usize, bid: i64, tid: i64) {
        let place = (bid, tid);
        let mut env = vec![V::U(NEVER); nregs];
        let mut pc = 0usize;
        let mut steps = 0u64;
        while pc < self.code.len() {
            steps += 1;
            self.total += 1;
            if self.total.is_multiple_of(CLOCK_EVERY) && self.deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                self.timed_out = true;
                return;
            }
            if self.total > MAX_TOTAL_STEPS {
                self.fail(
                    pc,
                    &format!("the threads of the launch run more than {MAX_TOTAL_STEPS} instructions together (pass a smaller `--block` or `--grid`)"),
                    V::K(0, false),
                    place,
                );
                return;
            }
            if steps > MAX_STEPS {
                self.fail(
                    pc,
                    &format!("thread b{bid}t{tid} runs more than {MAX_STEPS} instructions (a loop that does not end?)"),
                    V::K(0, false),
                    place,
                );
                return;
            }
            self.sites[pc].visited = true;
            let c = &self.code[pc];
            if let Some((neg, p)) = c.guard {
                match env[p] {
                    V::K(v, ptr) => {
                        if ptr {
                            self.fail(
                                pc,
                                "the guard is computed from a pointer parameter (pass `--param` if it is an integer)",
                                V::K(0, false),
                                place,
                            );
                            return;
                        }
                        if (v != 0) == neg {
                            pc += 1;
                            continue;
                        }
                    }
                    u => {
                        match &c.op {
                            Op::Defs(d) => {
                                for (r, _) in d {
                                    env[*r] = u;
                                }
                            }
                            Op::Unknown(d) => {
                                for r in d {
                                    env[*r] = u;
                                }
                            }
                            Op::Mem { kind, dsts, .. } if kind.is_atomic() => {
                                self.sites[pc].dropped = true;
                                for r in dsts {
                                    env[*r] = u;
                                }
                            }
                            // A fence matters where barriers order memory only
                            // through fences (cuda-sm90-nofence): not guessed.
                            Op::Nop => {}
                            op => {
                                let what = if matches!(op, Op::Bra(_)) {
                                    "the branch condition"
                                } else {
                                    "whether this instruction runs"
                                };
                                self.fail(pc, what, u, place);
                                return;
                            }
                        }
                        pc += 1;
                        continue;
                    }
                }
            }
            self.sites[pc].executed = true;
            match &c.op {
                Op::Defs(defs) => {
                    let vals: Vec<V> = defs.iter().map(|(_, e)| self.eval(e, &env, pc, place)).collect();
                    for ((r, _), v) in defs.iter().zip(vals) {
                        env[*r] = v;
                    }
                }
                Op::Unknown(d) => {
                    for r in d {
                        env[*r] = V::U(pc);
                    }
                }
                Op::Nop | Op::Fence(_) => {}
                Op::Bra(l) => {
                    pc = self.labels[l];
                    continue;
                }
                Op::Exit => return,
                Op::Mem {
                    kind,
                    addr,
                    elems,
                    esize,
                    dsts,
                } => {
                    match self.eval(addr, &env, pc, place) {
                        V::K(a, _) => {
                            let mut locs = Vec::new();
                            for e in 0..*elems {
                                let at = a + (e * esize) as i64;
                                match self.resolve(at) {
                                    Some(l) => locs.push(l),
                                    None => {
                                        self.fail(
                                            pc,
                                            &format!("the address {at:#x} lies in no variable or parameter buffer of the kernel"),
                                            V::K(0, false),
                                            place,
                                        );
                                        return;
                                    }
                                }
                            }
                            if !kind.is_atomic() {
                                for &l in &locs {
                                    let u = self.uses.entry(l).or_default();
                                    LocUse::add(&mut u.users, self.g);
                                    if *kind == MemKind::Write {
                                        LocUse::add(&mut u.writers, self.g);
                                    }
                                }
                            }
                            let site = &mut self.sites[pc];
                            site.addrs.insert(a, locs);
                            note(&mut site.place, &mut site.place_varies, self.g, a);
                        }
                        u => {
                            if !kind.is_atomic() {
                                self.fail(pc, "the address", u, place);
                                return;
                            }
                            self.sites[pc].dropped = true;
                        }
                    }
                    for r in dsts {
                        env[*r] = V::U(pc);
                    }
                }
                Op::Bar { sel, count, dst, .. } => {
                    if let Some(s) = sel {
                        let Some(v) = self.barrier_operand(s, &env, pc, place, "the barrier operand") else {
                            return;
                        };
                        let site = &mut self.sites[pc];
                        site.sels.insert(v);
                        note(&mut site.place, &mut site.place_varies, self.g, v);
                    }
                    if let Some(n) = count {
                        let Some(v) = self.barrier_operand(n, &env, pc, place, "the thread count") else {
                            return;
                        };
                        self.sites[pc].counts.insert(v);
                    }
                    if let Some(r) = dst {
                        // A reduction over the phase: not known here.
                        env[*r] = V::U(pc);
                    }
                }
            }
            pc += 1;
        }
    }
}
