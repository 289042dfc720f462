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

use crate::ops::{apply, CInstr, FenceKind, MArg, MemKind, Op, PExpr, PlainSize};
use bc_syntax::{Diagnostic, Op as BOp, SourceFile, Span};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

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
    /// The variable's initializer (`VarDecl::init`) and element size.
    pub init: Option<Option<Vec<i64>>>,
    pub elem_bytes: u32,
    /// The grid workspace of a cooperative launch (nvcc's grid sync).
    pub workspace: bool,
    /// A pointer parameter's buffer (reaches below its base: `below`).
    pub pointer: bool,
    /// The alignment in bytes the program is given for its base (`.align`,
    /// else the element size; 256 for a pointer parameter's buffer, as
    /// `cudaMalloc` gives): an mbarrier object needs 8.
    pub align: u64,
    pub span: Span,
}

impl Region {
    /// The bytes an address may lie past the base and still be in the
    /// region: its size, or where it has none a quarter of the spacing of
    /// its kind.
    pub fn extent(&self) -> i64 {
        (self.size).map_or(if self.shared { REGION_STRIDE } else { GLOBAL_STRIDE } / 4, |s| {
            s as i64
        })
    }

    /// The bytes an address may lie below the base and still be in the
    /// region: none for a variable, whose first byte is its base; a
    /// quarter of the spacing for a pointer parameter's buffer, since a
    /// kernel may be passed a pointer into the middle of its allocation
    /// (WEFT's RTM stencils read `in[-k]` for their halo). Two buffers
    /// still never meet: `b[-1]` is in `b`'s buffer, where it lay at the
    /// end of the previous parameter's until session 37.
    pub fn below(&self) -> i64 {
        // Only a pointer parameter's: an unsized `.extern .global` array
        // starts at its base as any variable does (review, session 37).
        if self.pointer {
            GLOBAL_STRIDE / 4
        } else {
            0
        }
    }

    /// The value the location `offset` bytes in starts with, when known:
    /// the initializer's element there, or zero without one (a `.global`
    /// variable starts at zero: PTX ISA, "Initializers"; shared memory and
    /// a pointer parameter's buffer are taken to start at zero too, which
    /// docs/ptx.md states as an assumption). `None`: an initializer the
    /// front end does not read, or an offset inside an element.
    pub fn initial(&self, offset: i64) -> Option<i64> {
        match &self.init {
            None => Some(0),
            Some(None) => None,
            Some(Some(v)) => {
                let e = self.elem_bytes.max(1) as i64;
                (offset % e == 0).then(|| v.get((offset / e) as usize).copied().unwrap_or(0))
            }
        }
    }
}

/// The spacing of shared regions, four times the largest size assumed
/// for one of unknown size (a dynamic `extern .shared` array; a block has
/// at most 228 KiB).
pub const REGION_STRIDE: i64 = 1 << 20;

/// The spacing of global regions (variables, `.const` variables, pointer
/// parameters' buffers): a pointer parameter's buffer (of unknown size)
/// is taken to reach 16 GiB past its base and 16 GiB below it, more than
/// a buffer of a kernel checked here holds, and never meets another.
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
    /// A warp intrinsic's operands the pre-evaluation must know (a
    /// shuffle's source lane and width), by operand: their values.
    pub args: BTreeMap<usize, BTreeSet<i64>>,
    /// Executed with its guard true at least once.
    pub executed: bool,
    /// Per thread (by index in the grid, ascending) that executed it, the
    /// address or constant barrier operand it used, while each thread
    /// used one value only (`place_varies` says otherwise): the choice is
    /// then a function of the thread's place.
    pub place: Vec<(u64, i64)>,
    pub place_varies: bool,
    /// A memory access: per thread (ascending) the addresses it used, a
    /// pair per visit that changed the address (emit.rs dedups), while
    /// under [`PLACE_ADDRS_CAP`] pairs (past it, `place_addrs_lost`).
    /// Where each thread keeps to its own few addresses (an output word
    /// per loop iteration), emit.rs chooses by the place first, so that
    /// each thread's code names only its own locations.
    pub place_addrs: Vec<(u64, i64)>,
    pub place_addrs_lost: bool,
    /// An atomic access whose address or guard was unknown on some visit:
    /// it is left out (atomics never race and their values are not
    /// tracked, so no verdict depends on it).
    pub dropped: bool,
    /// An mbarrier poll (`test_wait`, `try_wait`) that every thread
    /// reaching it retries until it succeeds ([`Tracer::retry_loop`]):
    /// emitted as the blocking wait, its predicate then true.
    pub blocking: bool,
    /// A strong load that polls its location in a spin loop
    /// ([`Tracer::spin_loop`]): the loop's exit condition over the loaded
    /// value (`PExpr::Reg(SPIN)`) and registers the loop does not change,
    /// emitted as an `await` before the load.
    pub spin: Option<PExpr>,
    /// A load of a spin loop (`spin` or not: the first poll of a rotated
    /// loop only decides whether the loop runs): emitted with its value.
    pub poll: bool,
    /// On a spin loop's path: emitted as it is, and its backward branches
    /// close a loop that may run any number of times (never counted).
    pub in_spin: bool,
    /// A store's or atomic's operand values, per visit (`vals_unknown`:
    /// some visit's were not known, and the instruction that made them so).
    pub vals: BTreeSet<Vec<i64>>,
    pub vals_unknown: Option<usize>,
    /// Part of nvcc's grid sync (`Tracer::grid_access`).
    pub grid: Option<Grid>,
    /// A `cp.async` or `cp.async.bulk`: each copy a visit made, with
    /// its locations; `place` holds the copy's index.
    pub copies: Vec<(CopyKey, CopyLocs)>,
}

/// One visit's copy: its destination and source addresses, then for a
/// bulk copy its byte count and its mbarrier's address (`-1` where it has
/// none), for a `cp.async` the value of its `src-size` or `ignore-src`
/// operand (`-1` without one) and `-1`.
pub type CopyKey = (i64, i64, i64, i64);

/// A copy's destination and source locations with the bytes it writes
/// and reads there (a source of 0 bytes is not read: `cp.async`'s
/// `src-size` 0 or `ignore-src`), and its mbarrier object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyLocs {
    pub dst: LocKey,
    pub dst_bytes: u32,
    pub src: LocKey,
    pub src_bytes: u32,
    pub bar: Option<LocKey>,
}

/// The parts of cooperative groups' grid sync as nvcc compiles it
/// (cooperative_groups/details/sync.h, `sync_grids`): every thread of a
/// block passes a block barrier, the block's master adds to the grid
/// workspace's `barrier` word (`atom.add.release.gpu`) and polls it until
/// its top bit flips, and every thread passes a second block barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grid {
    /// The first block barrier: the litmus `grid.sync`.
    Begin,
    /// The second: nothing (the `grid.sync` covers it).
    End,
    /// The master's arrival on the workspace word, and its poll.
    Arrival,
    Poll,
}

/// Whether instruction `c` runs under its guard in `env`: `None` when the
/// guard's value is unknown.
fn guard_holds(c: &CInstr, env: &[V]) -> Option<bool> {
    match c.guard {
        None => Some(true),
        Some((neg, g)) => match env[g] {
            V::K(v, false) => Some((v != 0) != neg),
            _ => None,
        },
    }
}

/// The conditions of a path, all of them (true for none).
fn conjunction(conds: &[PExpr]) -> PExpr {
    conds
        .iter()
        .cloned()
        .reduce(|a, b| PExpr::Bin(BOp::And, Box::new(a), Box::new(b)))
        .unwrap_or(PExpr::Int(1))
}

/// The polled value in a spin loop's exit condition (`Site::spin`).
pub const SPIN: usize = usize::MAX;

/// A spin loop around a poll ([`Tracer::spin_loop`]).
struct SpinLoop {
    /// The first instruction with an effect after the loop, and the
    /// registers there (those the polled value decides are unknown).
    exit: usize,
    env: Vec<V>,
    /// Each poll of the loop (a rotated loop has two: one before the loop,
    /// one in it) and, for one that comes back to itself, its exit
    /// condition.
    polls: BTreeMap<usize, Option<PExpr>>,
    /// The instructions on the loop's paths, and the address polled.
    path: BTreeSet<usize>,
    addr: i64,
    /// Every register a path that goes round writes, and the
    /// instructions such paths run.
    written: BTreeSet<usize>,
    fail_path: BTreeSet<usize>,
}

/// A value on a spin loop's path ([`Tracer::spin_loop`]).
enum S {
    /// As the pre-evaluation knows it, with the register it was read from
    /// when the loop has not written that register.
    V(V, Option<usize>),
    /// Computed from the polled value.
    E(PExpr),
}

/// One path of a spin loop's walk.
#[derive(Clone)]
struct Walk {
    at: usize,
    env: Vec<V>,
    sym: BTreeMap<usize, PExpr>,
    written: BTreeSet<usize>,
    conds: Vec<PExpr>,
    /// The instructions this path ran.
    trail: Vec<usize>,
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

/// The most (thread, address) pairs a memory site keeps in
/// [`Site::place_addrs`]: past it the site's tree compares the address
/// alone.
pub const PLACE_ADDRS_CAP: usize = 1 << 20;

/// Notes that thread `g` used address `a` at a site (`Site::place_addrs`).
fn note_addr(site: &mut Site, g: u64, a: i64) {
    if site.place_addrs_lost || site.place_addrs.last() == Some(&(g, a)) {
        return;
    }
    if site.place_addrs.len() >= PLACE_ADDRS_CAP {
        site.place_addrs_lost = true;
        site.place_addrs = Vec::new();
        return;
    }
    site.place_addrs.push((g, a));
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum V {
    K(i64, bool),
    /// Unknown, made so at this instruction (`usize::MAX`: never written).
    U(usize),
    /// The token (the state) the `mbarrier.arrive` at this instruction
    /// returned: a value the explorer computes, that only a wait may read
    /// (anything computed from it is unknown).
    T(usize),
}

const NEVER: usize = usize::MAX;

/// Marks the origin of a [`V::U`] made unknown because the instruction at
/// the rest of it took bits of a guessed buffer address (`V::K(_, true)`)
/// in a way that depends on the guess ([`Tracer::origin`] says so).
const GUESSED: usize = 1 << 62;

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
    /// The locations used as mbarrier objects.
    pub mbars: HashSet<LocKey>,
    /// The locations a spin loop polls (their stores carry values).
    pub awaited: HashSet<LocKey>,
    /// nvcc's grid sync is used in its split form (`Grid`).
    pub grid_split: bool,
    /// The locations a copy reads or writes, every piece of its bytes
    /// ([`Trace::parts`]): always modelled (the copy races as a thread of
    /// its own, even with its issuer).
    pub copied: HashSet<LocKey>,
    /// Per region, the offsets where some access starts or a plain one
    /// ends ([`Trace::parts`]).
    pub cuts: HashMap<usize, BTreeSet<i64>>,
}

impl Trace {
    /// The locations a plain access of `bytes` bytes at `l` covers: the
    /// pieces of its region between consecutive cuts, from its start to
    /// its end. Two plain accesses conflict when their bytes overlap
    /// (PTX ISA, "Memory Consistency Model", its conflict and overlap
    /// definitions: accesses overlap when they share a byte), which is
    /// exactly when they share a piece; where every access of a region
    /// has one width and alignment, each covers one piece, its start.
    pub fn parts(&self, l: LocKey, bytes: u32) -> Vec<LocKey> {
        parts(&self.cuts, l, bytes)
    }
}

fn parts(cuts: &HashMap<usize, BTreeSet<i64>>, l: LocKey, bytes: u32) -> Vec<LocKey> {
    match cuts.get(&l.0) {
        Some(c) => {
            let v: Vec<LocKey> = c.range(l.1..l.1 + i64::from(bytes.max(1))).map(|&o| (l.0, o)).collect();
            if v.is_empty() {
                vec![l]
            } else {
                v
            }
        }
        None => vec![l],
    }
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
        elem_uses: HashMap::new(),
        cuts: HashMap::new(),
        widths: BTreeMap::new(),
        mbars: BTreeMap::new(),
        awaited: BTreeMap::new(),
        workspace: regions.iter().position(|r| r.workspace),
        prev_effect: None,
        follows: HashSet::new(),
        grid_open: false,
        grid_bad: BTreeSet::new(),
        grid_split: false,
        copied: HashSet::new(),
        strong_writes: HashSet::new(),
        data_regions: Default::default(),
        poll_scopes: HashMap::new(),
        lane_values: HashMap::new(),
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
    // Each plain access's uses go to every piece it covers (`Trace::parts`).
    let mut uses: HashMap<LocKey, LocUse> = HashMap::new();
    for (&(l, bytes), u) in &t.elem_uses {
        for piece in parts(&t.cuts, l, bytes) {
            uses.entry(piece).or_default().merge(u);
        }
    }
    let racy = uses.iter().filter(|(_, u)| u.racy()).map(|(l, _)| *l).collect();
    let copied: HashSet<LocKey> = (t.copied.iter())
        .flat_map(|&(l, bytes)| parts(&t.cuts, l, bytes))
        .collect();
    // A proxy fence that names a state space (`fence.proxy.async.shared::cta`,
    // `.shared::cluster`) orders the generic and async proxies in that
    // space only (PTX ISA, "membar/fence"), while the model's proxy fence
    // orders every space. Where a bulk copy reads or writes global memory
    // that plain stores write, that difference can hide a race (review,
    // session 37: a generic store to global memory, a `.shared::cta` proxy
    // fence, a barrier, then a TMA load of that memory was `ok`): such a
    // fence is inconclusive there. Without such a copy it orders what the
    // model's does.
    // A thread's complete-tx is relaxed, the one semantics PTX gives it:
    // it releases none of the thread's writes, while the model's
    // `mbarrier.complete_tx` is the copy engine's, whose completion makes
    // the copy's writes visible to the waiters (review, session 37: a
    // thread's store, its complete_tx, then a read after the wait was
    // `ok`). Right after a fence of the block's scope or wider (a release
    // pattern of the PTX memory model: the fence, then a strong write of
    // the mbarrier) it releases what the fence orders, as the model's
    // statement does; elsewhere it is inconclusive.
    for (pc, c) in code.iter().enumerate() {
        if !matches!(&c.op, Op::MBar { name, .. } if name == "mbarrier.complete_tx") {
            continue;
        }
        // The fence must run whenever the complete-tx does: unguarded,
        // right before it, with no branch landing between them (review,
        // session 37: `@!p fence; complete_tx`, and a jump past the fence
        // to a label on the complete-tx, counted as fenced).
        let target = labels.values().any(|&l| l == pc);
        let fenced = !target
            && pc.checked_sub(1).is_some_and(|p| {
                code[p].guard.is_none()
                    && matches!(
                        code[p].op,
                        Op::Fence {
                            kind: FenceKind::Memory,
                            ..
                        }
                    )
            });
        if !fenced {
            t.errors.entry(pc).or_insert_with(|| {
                Diagnostic::error(
                    c.span,
                    "inconclusive: a thread's complete-tx is relaxed and releases none of its writes, while the model's `mbarrier.complete_tx` is the copy engine's, which does; put a `fence.acq_rel.cta` (or wider) right before it to release the thread's writes",
                )
            });
        }
    }
    // A strong write of memory a bulk copy reads or writes: the generic
    // and async proxies are ordered only through a proxy fence of the
    // writer (`fence.proxy.async`), which the model's race rule judges
    // for plain writes only (review, session 37: a strong store read by
    // a TMA store without the fence was `ok`). Inconclusive there.
    for &(l, n, pc) in &t.strong_writes {
        let overlaps =
            (t.copied.iter()).any(|&(c, m)| c.0 == l.0 && c.1 < l.1 + i64::from(n) && l.1 < c.1 + i64::from(m));
        if overlaps {
            t.errors.entry(pc).or_insert_with(|| {
                Diagnostic::error(
                    code[pc].span,
                    "inconclusive: a strong write (`st.relaxed`, `st.volatile`, an atomic) of memory a bulk copy accesses; the model judges the proxy fence (`fence.proxy.async`) a copy needs only after plain stores (write the data with plain stores, then the proxy fence)",
                )
            });
        }
    }
    let global_written_and_copied = copied
        .iter()
        .any(|p| !regions[p.0].shared && uses.get(p).is_some_and(|u| u.writers[0].is_some()));
    if global_written_and_copied {
        for (pc, c) in code.iter().enumerate() {
            if matches!(
                c.op,
                Op::Fence {
                    kind: FenceKind::Proxy { shared_only: true },
                    ..
                }
            ) {
                t.errors.entry(pc).or_insert_with(|| {
                    Diagnostic::error(
                        c.span,
                        "inconclusive: this proxy fence orders shared memory only, and a bulk copy of the kernel accesses global memory that plain stores write; the model's proxy fence does not tell state spaces apart (write `fence.proxy.async` without a state space if it is meant for both)",
                    )
                });
            }
        }
    }
    // A location a spin loop polls carries values, one per location:
    // every access that shares a byte with it must access exactly it (the
    // same start and width), or the values the polls read are not the
    // ones modelled.
    let mut split_polls: Vec<(usize, LocKey)> = Vec::new();
    for (&l, &pc) in &t.awaited {
        let here = t.widths.get(&l);
        let w = here.and_then(|ws| ws.iter().max()).copied().unwrap_or(1) as i64;
        let mixed = here.is_some_and(|ws| ws.len() > 1)
            || (t.widths.range((l.0, i64::MIN)..(l.0, l.1 + w)))
                .any(|(&m, ws)| m != l && m.1 + ws.iter().max().copied().unwrap_or(1) as i64 > l.1);
        if mixed {
            split_polls.push((pc, l));
        }
    }
    refuse_locations(
        &mut t.errors,
        code,
        regions,
        split_polls,
        "the location this spin loop polls",
        "is also accessed with another width or alignment",
    );
    // An mbarrier object is opaque (PTX ISA, "Contents of the mbarrier
    // object": accessed only through mbarrier instructions): a plain or
    // atomic access of one is not modelled.
    // Any access whose bytes reach into the object's 8 (a copy's included:
    // its width is its size).
    let clash: Vec<(usize, LocKey)> = (t.mbars.iter())
        .filter(|(l, _)| {
            (t.widths.range((l.0, i64::MIN)..(l.0, l.1 + 8)))
                .any(|(&m, ws)| m.1 + ws.iter().max().copied().unwrap_or(1) as i64 > l.1)
        })
        .map(|(l, pc)| (*pc, *l))
        .collect();
    refuse_locations(
        &mut t.errors,
        code,
        regions,
        clash,
        "this mbarrier object",
        "is also read or written as memory",
    );
    t.check_awaited(code, regions);
    t.check_grid(code);
    Trace {
        sites: t.sites,
        racy,
        diags: t.errors.into_values().collect(),
        timed_out: t.timed_out,
        mbars: t.mbars.into_keys().collect(),
        awaited: t.awaited.into_keys().collect(),
        grid_split: t.grid_split,
        copied,
        cuts: t.cuts,
    }
}

/// An error at each instruction of `found` (with the location it uses, in
/// order of the instructions): `what` at its location `why`, which the
/// front end does not model. The first error an instruction got stays.
fn refuse_locations(
    errors: &mut BTreeMap<usize, Diagnostic>,
    code: &[CInstr],
    regions: &[Region],
    mut found: Vec<(usize, LocKey)>,
    what: &str,
    why: &str,
) {
    found.sort();
    for (pc, l) in found {
        let d = Diagnostic::error(
            code[pc].span,
            format!(
                "{what} ({} bytes into `{}`) {why}, which is not modelled (docs/ptx.md)",
                l.1, regions[l.0].name
            ),
        );
        errors.entry(pc).or_insert(d);
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
    /// Per plain access's location and width, its plain writers and
    /// plain accessors (threads by grid index; the first two distinct of
    /// each are enough); [`trace`] gives them to the pieces it covers.
    elem_uses: HashMap<(LocKey, u32), LocUse>,
    /// Per region, the offsets where an access starts or a plain one ends
    /// (`Trace::cuts`).
    cuts: HashMap<usize, BTreeSet<i64>>,
    /// Per location where some memory access (an instruction's or a
    /// copy's) starts, the widths it is accessed with (bytes).
    widths: BTreeMap<LocKey, BTreeSet<u32>>,
    /// Per location used as an mbarrier object, the first instruction
    /// that used it so.
    mbars: BTreeMap<LocKey, usize>,
    /// Per location a spin loop polls, the first such poll.
    awaited: BTreeMap<LocKey, usize>,
    /// The grid workspace's region (a cooperative launch).
    workspace: Option<usize>,
    /// The running thread's last instruction with an effect, and every
    /// pair of effects one thread ran one after the other (the check of
    /// grid sync's shape, `check_grid`).
    prev_effect: Option<usize>,
    follows: HashSet<(usize, usize)>,
    /// The running thread is between a grid sync's two block barriers,
    /// and the instructions where a thread broke that alternation.
    grid_open: bool,
    grid_bad: BTreeSet<usize>,
    /// Some thread runs other code between a grid sync's parts: the split
    /// form (`grid.barrier_arrive`/`barrier_wait`, `check_grid`).
    grid_split: bool,
    /// The locations `cp.async` copies touch.
    /// Each copy's destination and source with their bytes (a side of no
    /// bytes, a source the copy does not read, left out).
    copied: HashSet<(LocKey, u32)>,
    /// The strong writes (`st.relaxed`, `st.volatile`, `atom`, `red`):
    /// location, bytes and pc. The model judges the proxy fence a bulk
    /// copy needs only after plain stores (`bc_rules` race), so a strong
    /// write of memory a copy accesses is inconclusive (below).
    strong_writes: HashSet<(LocKey, u32, usize)>,
    /// Per conditional branch, its data-only region once looked for
    /// ([`Tracer::data_region`]; `None`: it has none).
    data_regions: std::cell::RefCell<HashMap<usize, Option<std::rc::Rc<DataRegion>>>>,
    /// Per load, [`Tracer::poll_scope`] once asked.
    poll_scopes: HashMap<usize, std::rc::Rc<PollScope>>,
    /// The warp intrinsics (`elect.sync` too): per (block, warp, mask),
    /// per lane, the values it gave, in order ([`Tracer::shuffled`],
    /// [`Tracer::elect`]): a lane's `k`-th is its arrival in the `k`-th
    /// phase of the warp's barrier of that mask.
    lane_values: HashMap<(i64, i64, i64), Vec<Vec<V>>>,
}

/// The instructions between a forward conditional branch and the point
/// where its two ways meet again, when every one of them only computes
/// registers ([`Tracer::data_region`]).
#[derive(Debug)]
struct DataRegion {
    /// Where the two ways meet.
    join: usize,
    /// The instructions on either way (not the branch, not the join).
    body: Vec<usize>,
    /// The registers some instruction of `body` writes.
    defs: Vec<usize>,
}

/// What a spin loop's walk from a load can reach ([`Tracer::poll_scope`]).
#[derive(Debug)]
struct PollScope {
    /// Some one-element load is reachable: the load may poll again.
    again: bool,
    /// Every register an instruction the walk may run writes (a superset:
    /// both ways of every branch, through every one-element load).
    written: Vec<usize>,
}

/// The most instructions a data-only region may hold (nvcc's inlined
/// double-precision `log`, `pow` or `exp` slow paths are a few dozen).
const MAX_DATA_REGION: usize = 4096;

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

    /// Adds the threads of `o` (the uses of one piece from several
    /// accesses): the first two distinct of each list stay enough.
    fn merge(&mut self, o: &LocUse) {
        for &g in o.writers.iter().flatten() {
            LocUse::add(&mut self.writers, g);
        }
        for &g in o.users.iter().flatten() {
            LocUse::add(&mut self.users, g);
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
                // The negation or complement of a guessed buffer address
                // depends on the guess.
                V::K(_, true) => V::U(pc | GUESSED),
                V::K(v, false) => V::K(apply(*op, 0, v), false),
                V::U(o) | V::T(o) => V::U(o),
            },
            PExpr::Bin(op, a, b) => match (self.eval(a, env, pc, place), self.eval(b, env, pc, place)) {
                // PTX leaves a quotient or remainder by zero unspecified:
                // unknown, never the 0 the evaluator would give.
                (V::K(_, _), V::K(0, _)) if matches!(op, BOp::Div | BOp::Rem) => V::U(pc),
                // Two guessed buffer addresses combined (a sum, a
                // difference): the value depends on the guess.
                (V::K(_, true), V::K(_, true)) => V::U(pc),
                // A guessed buffer address is only ever the base of an
                // access (docs/ptx.md, "Memory"): plus or minus a known
                // integer it is still that base and an offset, and a
                // comparison with one stays marked (a branch on it is
                // inconclusive). Any other operation (a mask, a shift, a
                // product, a truncation to 32 bits, an integer minus it)
                // gives a value that depends on the guess: unknown. (A
                // 64-bit integer parameter without `--param` is such a
                // guess too: `(tid + (int)shift) & 7` took the guess's
                // low bits, 0, for the parameter's.)
                (V::K(x, p), V::K(y, q)) if p || q => {
                    let keeps = match op {
                        BOp::Add => true,
                        BOp::Sub => p,
                        BOp::Eq | BOp::Ne | BOp::Lt | BOp::Le | BOp::Gt | BOp::Ge => true,
                        _ => false,
                    };
                    if keeps {
                        V::K(apply(*op, x, y), true)
                    } else {
                        V::U(pc | GUESSED)
                    }
                }
                (V::K(x, _), V::K(y, _)) => V::K(apply(*op, x, y), false),
                (V::U(o), _) | (_, V::U(o)) | (V::T(o), _) | (_, V::T(o)) => V::U(o),
            },
        }
    }

    /// The data-only region of the conditional branch at `pc`: when the
    /// branch jumps forward, and every instruction on its two ways until
    /// they meet only computes registers (`Defs`, `Unknown`, `Nop`, and
    /// forward branches, guarded or not), so that which way a thread
    /// takes changes no effect and no path (docs/ptx.md, "Unknown
    /// values"). The ways meet at the first instruction that every path
    /// from the branch reaches: with forward branches only, the smallest
    /// pending instruction once it is the only one. A backward branch (a
    /// loop whose trip count is data), a memory access, a barrier, a
    /// fence, a warp-collective instruction ([`CInstr::collective`]),
    /// `exit` or the end of the code on the way: `None`.
    fn data_region(&self, pc: usize) -> Option<std::rc::Rc<DataRegion>> {
        if let Some(r) = self.data_regions.borrow().get(&pc) {
            return r.clone();
        }
        let found = self.find_data_region(pc).map(std::rc::Rc::new);
        self.data_regions.borrow_mut().insert(pc, found.clone());
        found
    }

    fn find_data_region(&self, pc: usize) -> Option<DataRegion> {
        let Op::Bra(l) = &self.code[pc].op else {
            return None;
        };
        let target = *self.labels.get(l)?;
        if target <= pc {
            return None;
        }
        let mut pending = BTreeSet::from([pc + 1, target]);
        let (mut body, mut defs) = (Vec::new(), BTreeSet::new());
        loop {
            let m = *pending.first()?;
            if m >= self.code.len() {
                return None;
            }
            if pending.len() == 1 {
                return Some(DataRegion {
                    join: m,
                    body,
                    defs: defs.into_iter().collect(),
                });
            }
            pending.remove(&m);
            if body.len() >= MAX_DATA_REGION {
                return None;
            }
            let c = &self.code[m];
            match &c.op {
                Op::Defs(d) => defs.extend(d.iter().map(|(r, _)| *r)),
                // A warp-collective instruction whose result is unknown
                // (`mma.sync.aligned`, `elect.sync`): all the warp must run
                // it together, so which threads do is not data.
                Op::Unknown(_) if c.collective => return None,
                Op::Unknown(d) => defs.extend(d.iter().copied()),
                Op::Nop => {}
                Op::Bra(t) => {
                    let t = *self.labels.get(t)?;
                    if t <= m {
                        return None;
                    }
                    pending.insert(t);
                    if c.guard.is_none() {
                        body.push(m);
                        continue;
                    }
                }
                _ => return None,
            }
            pending.insert(m + 1);
            body.push(m);
        }
    }

    /// What the spin-loop walk from the load at `pc` can reach, through
    /// instructions with no effect on the model, either way of every
    /// branch and on through every one-element load: whether some
    /// one-element load is reachable (if none is, [`Tracer::spin_loop`]
    /// could only answer that the load is no spin loop, and its walk is
    /// skipped), and the registers those instructions write (the only
    /// registers in which two of the walk's states can differ, so its
    /// set of states seen is keyed by them rather than by every
    /// register). The same for every thread: cached.
    fn poll_scope(&mut self, pc: usize) -> std::rc::Rc<PollScope> {
        if let Some(s) = self.poll_scopes.get(&pc) {
            return s.clone();
        }
        let mut seen = HashSet::new();
        let mut work = vec![pc + 1];
        let (mut again, mut written) = (false, BTreeSet::new());
        if let Op::Mem { dsts, .. } = &self.code[pc].op {
            written.extend(dsts.iter().copied());
        }
        while let Some(at) = work.pop() {
            let Some(c) = self.code.get(at) else { continue };
            if !seen.insert(at) {
                continue;
            }
            match &c.op {
                Op::Defs(d) => {
                    written.extend(d.iter().map(|(r, _)| *r));
                    work.push(at + 1);
                }
                Op::Unknown(d) => {
                    written.extend(d.iter().copied());
                    work.push(at + 1);
                }
                Op::Nop => work.push(at + 1),
                Op::Bra(l) => {
                    if let Some(&t) = self.labels.get(l) {
                        work.push(t);
                    }
                    if c.guard.is_some() {
                        work.push(at + 1);
                    }
                }
                Op::Mem {
                    kind: MemKind::Load,
                    elems: 1,
                    dsts,
                    ..
                } if dsts.len() == 1 => {
                    again = true;
                    written.extend(dsts.iter().copied());
                    work.push(at + 1);
                }
                _ => {}
            }
        }
        let scope = std::rc::Rc::new(PollScope {
            again,
            written: written.into_iter().collect(),
        });
        self.poll_scopes.insert(pc, scope.clone());
        scope
    }

    /// The value of a barrier's operand `e` (`what`: its name in the
    /// message); `None` when it is unknown or computed from a pointer
    /// parameter's guessed address, after failing the instruction
    /// (inconclusive).
    /// The lane `elect.sync` with `mask` elects for the running thread
    /// at `place` on this visit: its `k`-th run of an `elect.sync` with
    /// that mask joins the `k`-th of each mate, and the leader is the
    /// lowest lane of the mask among the mates that run one `k` times
    /// (an exited lane, or one that never gets there, is not elected: an
    /// H200 elects the lowest non-exited lane, docs/hardware.md). Lanes
    /// are traced in ascending order, so every lower mate's runs are
    /// known here; higher ones cannot lead. The explorer computes the
    /// same lane from the phase (`Reduce::Elect`); a lane outside its
    /// mask is `ub(syncwarp-mask)` there.
    fn elect(&mut self, place: (i64, i64), mask: i64) -> i64 {
        let lane = place.1 % 32;
        let vals = self.lane_values(place, mask);
        // Its value is the mask (the litmus `elect.sync`'s `value=`).
        vals[lane as usize].push(V::K(mask, false));
        let k = vals[lane as usize].len();
        (0..32)
            .find(|&y| mask & (1 << y) != 0 && vals[y as usize].len() >= k)
            .unwrap_or(lane)
    }

    /// The values the lanes of the warp at `place` gave the warp
    /// intrinsics of `mask` so far, per lane.
    fn lane_values(&mut self, place: (i64, i64), mask: i64) -> &mut Vec<Vec<V>> {
        self.lane_values
            .entry((place.0, place.1 / 32, mask & 0xffff_ffff))
            .or_insert_with(|| vec![Vec::new(); 32])
    }

    /// A warp intrinsic's value `v` given by the running thread at
    /// `place` with `mask` (`name`, e.g. `__shfl_sync`; `known`: its
    /// operands the pre-evaluation knows, by index), and its result where
    /// the pre-evaluation knows it: a shuffle whose source lane is the
    /// thread itself, or below it in its warp. Lanes are pre-evaluated in
    /// ascending order, so a lower lane's values at this mask are all
    /// known; its `k`-th is the one the thread's `k`-th intrinsic at this
    /// mask reads (the explorer's `k`-th phase of the warp's barrier of
    /// that mask; lanes that run different intrinsics there are
    /// `ub(syncwarp-mask)`). The explorer computes the same value from the
    /// phase (`System::warp_intrinsic`). So CUTLASS's
    /// `canonical_warp_idx_sync()`, a broadcast of `threadIdx.x / 32` from
    /// lane 0, steers branches. Unknown otherwise (`V::U`).
    fn shuffled(&mut self, place: (i64, i64), mask: i64, name: &str, v: V, known: &BTreeMap<usize, i64>) -> V {
        let lane = place.1 % 32;
        let vals = self.lane_values(place, mask);
        vals[lane as usize].push(v);
        let k = vals[lane as usize].len();
        let unknown = V::U(NEVER);
        let (Some(&b), Some(&width)) = (known.get(&1), known.get(&2)) else {
            return unknown;
        };
        if !(1..=32).contains(&width) || width & (width - 1) != 0 {
            return unknown;
        }
        // The source lane as the explorer picks it (PTX ISA, shfl.sync).
        let b = b & 31;
        let first = lane & !(width - 1);
        let (j, inside) = match name {
            "__shfl_sync" => (first + (b & (width - 1)), true),
            "__shfl_up_sync" => (lane - b, lane - b >= first),
            "__shfl_down_sync" => (lane + b, lane + b < first + width),
            "__shfl_xor_sync" => (lane ^ b, (lane ^ b) < first + width),
            _ => return unknown,
        };
        let src = if inside { j } else { lane };
        if src > lane || src < 0 || mask & (1 << src) == 0 {
            return unknown;
        }
        match vals[src as usize].get(k - 1) {
            Some(&V::K(x, ptr)) => V::K(x, ptr),
            _ => unknown,
        }
    }

    fn barrier_operand(&mut self, e: &PExpr, env: &[V], pc: usize, place: (i64, i64), what: &str) -> Option<i64> {
        match self.eval(e, env, pc, place) {
            V::K(_, true) => {
                let why = format!("{what} is computed from a pointer parameter (pass `--param` if it is an integer)");
                self.fail(pc, &why, V::K(0, true), place);
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
        if o != NEVER && o & GUESSED != 0 {
            let c = &self.code[o & !GUESSED];
            return (
                format!(
                    "`{}` (line {}), which takes bits of a 64-bit parameter's guessed buffer address",
                    self.text(c.span),
                    self.line(c.span)
                ),
                Some("pass `--param` if the parameter is an integer".into()),
            );
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
            V::U(o) | V::T(o) => {
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
        // The sentence on guessing belongs to unknown values and guessed
        // pointer values (`V::K(_, true)`) only, not to an address past a
        // variable's end or undefined behaviour.
        d = d.with_note(match why {
            V::U(_) | V::T(_) | V::K(_, true) => format!(
                "first seen in thread b{}t{}; the checker never guesses a value that steers control flow, an address or a barrier (docs/ptx.md, \"Unknown values\")",
                thread.0, thread.1
            ),
            V::K(_, false) => format!("first seen in thread b{}t{}", thread.0, thread.1),
        });
        self.errors.insert(pc, d);
    }

    /// Runs `op` at `at` on the registers when it only computes registers
    /// (`Defs`, whose values are all computed before any is written, or
    /// `Unknown`); whether it did. The one register semantics of the
    /// pre-evaluation, its poll checks included.
    fn register_step(&self, op: &Op, env: &mut [V], at: usize, place: (i64, i64)) -> bool {
        match op {
            Op::Defs(defs) => {
                let vals: Vec<V> = defs.iter().map(|(_, e)| self.eval(e, env, at, place)).collect();
                for ((r, _), v) in defs.iter().zip(vals) {
                    env[*r] = v;
                }
                true
            }
            Op::Unknown(d) => {
                for r in d {
                    env[*r] = V::U(at);
                }
                true
            }
            _ => false,
        }
    }

    /// The mbarrier object at `addr` for this thread: its address, noted
    /// at the site; `None` after failing the instruction.
    fn mbar_addr(&mut self, addr: &PExpr, env: &[V], pc: usize, place: (i64, i64)) -> Option<i64> {
        let (a, l) = self.mbar_loc(addr, env, pc, place)?;
        let site = &mut self.sites[pc];
        site.addrs.insert(a, vec![l]);
        note(&mut site.place, &mut site.place_varies, self.g, a);
        Some(a)
    }

    /// The address of an mbarrier operand and the object there (an
    /// 8-byte location of a `.shared` variable).
    fn mbar_loc(&mut self, addr: &PExpr, env: &[V], pc: usize, place: (i64, i64)) -> Option<(i64, LocKey)> {
        let a = match self.eval(addr, env, pc, place) {
            V::K(a, false) => a,
            u @ (V::U(_) | V::T(_)) => {
                self.fail(pc, "the mbarrier's address", u, place);
                return None;
            }
            V::K(..) => {
                self.fail(
                    pc,
                    "the mbarrier's address lies in a pointer parameter's buffer, not in shared memory",
                    V::K(0, false),
                    place,
                );
                return None;
            }
        };
        let l = match self.resolve(a) {
            Some(l) if self.regions[l.0].shared => l,
            _ => {
                self.fail(
                    pc,
                    &format!("the mbarrier's address {a:#x} lies in no `.shared` variable of the kernel"),
                    V::K(0, false),
                    place,
                );
                return None;
            }
        };
        // PTX ISA, "Size and alignment of mbarrier object": 8 bytes,
        // 8-byte aligned; a misaligned object (undefined behaviour), or one
        // that runs past its variable's end, is not modelled (review,
        // session 37: an object at `bar+4` of an 8-byte variable was a
        // separate object reaching into the next variable).
        // The variable's own alignment bounds the object's: a `.b8` array
        // without `.align 8` may lie anywhere (review, session 37: only
        // the offset in the variable was checked).
        let align = self.regions[l.0].align;
        if a % 8 != 0 || align < 8 || !self.fits(l, 8) {
            let name = self.regions[l.0].name.clone();
            let why = if a % 8 != 0 {
                format!("the mbarrier object at {a:#x} (in `{name}`) is not 8-byte aligned (undefined behaviour)")
            } else if align < 8 {
                format!(
                    "the mbarrier object in `{name}` may not be 8-byte aligned: the variable is aligned to {align} byte(s) (write `.align 8`; a misaligned object is undefined behaviour)"
                )
            } else {
                format!("the mbarrier object at {a:#x} runs past the end of `{name}` (it takes 8 bytes)")
            };
            self.fail(pc, &why, V::K(0, false), place);
            return None;
        }
        self.mbars.entry(l).or_insert(pc);
        Some((a, l))
    }

    /// Whether the poll at `pc` (in `env`) is a
    /// retry loop: a poll that fails leads, through instructions with no
    /// effect on the model (register arithmetic, `nanosleep`, branches,
    /// reads of the clock: libcu++'s back-off), only to polls of the same
    /// object with the same operand, and every poll that succeeds leads
    /// to the same instruction `X`, the first with an effect. Then the
    /// whole loop is the blocking wait followed by the path of a first
    /// poll that succeeds (PTX ISA, `mbarrier.test_wait`/`try_wait`: a
    /// poll has no effect unless it succeeds). Returns `X` and the
    /// registers whose values there depend on which poll succeeded (they
    /// are unknown from `X` on); or why it is not such a loop.
    fn retry_loop(&self, pc: usize, env: &[V], place: (i64, i64)) -> Result<(usize, Vec<usize>), String> {
        const MAX_PATHS: usize = 4096;
        let Op::MBar { name, dst, .. } = &self.code[pc].op else {
            unreachable!("a poll")
        };
        let key = |t: &Self, at: usize, env: &[V]| -> Option<(i64, Vec<V>)> {
            match &t.code[at].op {
                Op::MBar {
                    name: n,
                    addr,
                    args: a,
                    poll: true,
                    ..
                } if n == name => {
                    let x = match t.eval(addr, env, at, place) {
                        V::K(x, false) => x,
                        _ => return None,
                    };
                    Some((x, a.iter().map(|m| t.eval(m.expr(), env, at, place)).collect()))
                }
                _ => None,
            }
        };
        // The poll itself: its address was resolved by the caller.
        let me = key(self, pc, env).expect("a poll with a known address");
        let with = |env: &[V], r: usize, v: i64| {
            let mut e = env.to_vec();
            e[r] = V::K(v, false);
            e
        };
        let p = dst.expect("a poll has a predicate");
        let main = self.tail(pc + 1, with(env, p, 1), place)?;
        let mut differ: BTreeSet<usize> = BTreeSet::new();
        let mut seen: HashSet<(usize, Vec<V>)> = HashSet::new();
        let mut work = vec![(pc + 1, with(env, p, 0))];
        while let Some((at, env)) = work.pop() {
            if !seen.insert((at, env.clone())) {
                continue;
            }
            if seen.len() > MAX_PATHS {
                return Err(format!(
                    "the poll's retry path runs more than {MAX_PATHS} distinct steps"
                ));
            }
            let Some(c) = self.code.get(at) else {
                return Err("the poll's retry path runs off the end of the kernel".into());
            };
            let guard = guard_holds(c, &env);
            if guard == Some(false) {
                work.push((at + 1, env));
                continue;
            }
            let unsure = || {
                format!(
                    "the poll's retry path has an instruction whose guard is unknown, `{}` (line {})",
                    self.text(c.span),
                    self.line(c.span)
                )
            };
            match &c.op {
                Op::MBar { dst: Some(q), .. } if key(self, at, &env).as_ref() == Some(&me) => {
                    if guard.is_none() {
                        return Err(unsure());
                    }
                    let (x, e) = self.tail(at + 1, with(&env, *q, 1), place)?;
                    if x != main.0 {
                        return Err(format!(
                            "the poll's retry loop leaves at two places, lines {} and {}",
                            self.line(self.code[main.0.min(self.code.len() - 1)].span),
                            self.line(self.code[x.min(self.code.len() - 1)].span)
                        ));
                    }
                    differ.extend((0..e.len()).filter(|&r| e[r] != main.1[r]));
                    work.push((at + 1, with(&env, *q, 0)));
                }
                Op::Defs(_) | Op::Unknown(_) => {
                    let mut env = env;
                    match (&c.op, guard) {
                        // Whether it ran is unknown: so are its results.
                        (Op::Defs(defs), None) => {
                            for (r, _) in defs {
                                env[*r] = V::U(at);
                            }
                        }
                        (op, _) => {
                            self.register_step(op, &mut env, at, place);
                        }
                    }
                    work.push((at + 1, env));
                }
                Op::Nop => work.push((at + 1, env)),
                Op::Bra(l) => {
                    let to = self.labels[l];
                    if guard.is_none() {
                        work.push((at + 1, env.clone()));
                    }
                    work.push((to, env));
                }
                _ => {
                    return Err(format!(
                        "a failed poll leads to `{}` (line {}), not back to a poll of the same barrier",
                        self.text(c.span),
                        self.line(c.span)
                    ))
                }
            }
        }
        Ok((main.0, differ.into_iter().collect()))
    }

    /// From `at`, the path through instructions with no effect on the
    /// model (whose guards and branches are known) to the first
    /// instruction with one: that instruction and the registers there.
    fn tail(&self, mut at: usize, mut env: Vec<V>, place: (i64, i64)) -> Result<(usize, Vec<V>), String> {
        for _ in 0..100_000 {
            let Some(c) = self.code.get(at) else {
                return Ok((at, env));
            };
            match guard_holds(c, &env) {
                Some(true) => {}
                Some(false) => {
                    at += 1;
                    continue;
                }
                None => {
                    return Err(format!(
                        "after the poll succeeds, the guard of `{}` (line {}) is unknown",
                        self.text(c.span),
                        self.line(c.span)
                    ))
                }
            }
            if self.register_step(&c.op, &mut env, at, place) {
                at += 1;
                continue;
            }
            match &c.op {
                Op::Nop => {}
                Op::Bra(l) => {
                    at = self.labels[l];
                    continue;
                }
                _ => return Ok((at, env)),
            }
            at += 1;
        }
        Err("after the poll succeeds, the path does not reach an instruction with an effect".into())
    }

    /// Whether the strong load at `pc` (in `env`, polling address `me`)
    /// is a spin loop: the paths from it, through instructions with no
    /// effect on the model (register arithmetic, `nanosleep`, branches),
    /// either poll the same address again (a strong load of one element:
    /// the loop goes round) or reach one instruction `X` with an effect
    /// (the loop is left), and every register and guard they read is known
    /// to the pre-evaluation or computed from the polled value. Then each
    /// poll is an `await` of the condition under which its paths leave the
    /// loop, followed by the load and the loop as they are (docs/ptx.md,
    /// "Spin loops"): the `await` only skips the turns that would poll
    /// again without anything else happening, so the explorer sees every
    /// behaviour of the loop and none that it lacks. `Ok(None)`: no path
    /// polls again (a load whose value steers a branch, which the caller
    /// then reports as an unknown value).
    fn spin_loop(
        &self,
        pc: usize,
        env: &[V],
        me: i64,
        place: (i64, i64),
        opaque: bool,
        varies: &[usize],
    ) -> Result<Option<SpinLoop>, String> {
        const MAX_POLLS: usize = 256;
        const MAX_PATHS: usize = 1024;
        const MAX_STEPS: usize = 100_000;
        let poll_at = |at: usize, env: &[V]| -> bool {
            matches!(
                &self.code[at].op,
                Op::Mem { kind: MemKind::Load, elems: 1, dsts, addr, .. }
                    if dsts.len() == 1 && self.eval(addr, env, at, place) == V::K(me, false)
            )
        };
        // States differ only in the registers the walk may write; most
        // walks see one state, so they are kept in a list (hashing
        // thousands of registers per call cost seconds per kernel).
        // The first state is the caller's (`env` at `pc`): not copied.
        let mut seen: Vec<(usize, Vec<V>)> = Vec::new();
        let mut first = true;
        let mut queue = vec![(pc, env.to_vec())];
        let mut polls: BTreeMap<usize, Option<PExpr>> = BTreeMap::new();
        let mut path: BTreeSet<usize> = BTreeSet::new();
        let mut exit: Option<(usize, Vec<V>)> = None;
        let mut differ: BTreeSet<usize> = BTreeSet::new();
        let mut written: BTreeSet<usize> = BTreeSet::new();
        let mut fail_path: BTreeSet<usize> = BTreeSet::new();
        let mut again = false;
        let (mut paths, mut steps) = (0usize, 0usize);
        while let Some((p, penv)) = queue.pop() {
            if !std::mem::take(&mut first) {
                let same_as_first = p == pc && varies.iter().all(|&r| penv[r] == env[r]);
                let key: Vec<V> = varies.iter().map(|&r| penv[r]).collect();
                if same_as_first || seen.iter().any(|(q, k)| *q == p && *k == key) {
                    continue;
                }
                seen.push((p, key));
            }
            if seen.len() + 1 > MAX_POLLS {
                return Err(format!(
                    "the spin loop's polls run in more than {MAX_POLLS} distinct states"
                ));
            }
            let Op::Mem { dsts, ty, .. } = &self.code[p].op else {
                unreachable!("a poll is a load")
            };
            let d = dsts[0];
            let mut start = Walk {
                at: p + 1,
                env: penv,
                sym: BTreeMap::new(),
                written: BTreeSet::from([d]),
                conds: Vec::new(),
                trail: Vec::new(),
            };
            start.env[d] = V::U(p);
            start.sym.insert(d, crate::ops::norm(*ty, PExpr::Reg(SPIN)));
            let mut leave: Vec<PExpr> = Vec::new();
            let mut round = false;
            let mut work = vec![start];
            while let Some(mut w) = work.pop() {
                paths += 1;
                if paths > MAX_PATHS {
                    return Err(format!("the spin loop has more than {MAX_PATHS} paths"));
                }
                let left = loop {
                    steps += 1;
                    if steps > MAX_STEPS {
                        return Err("the spin loop's paths run more than 100000 instructions".into());
                    }
                    let Some(c) = self.code.get(w.at) else {
                        break true;
                    };
                    let here = w.at;
                    if let Some((neg, g)) = c.guard {
                        if let Some(e) = w.sym.get(&g).cloned() {
                            // A guard the polled value decides: both ways.
                            let holds = PExpr::Bin(
                                if neg { BOp::Eq } else { BOp::Ne },
                                Box::new(e.clone()),
                                Box::new(PExpr::Int(0)),
                            );
                            let fails = PExpr::Bin(
                                if neg { BOp::Ne } else { BOp::Eq },
                                Box::new(e),
                                Box::new(PExpr::Int(0)),
                            );
                            let mut skip = w.clone();
                            skip.conds.push(fails);
                            skip.at += 1;
                            skip.trail.push(here);
                            work.push(skip);
                            w.conds.push(holds);
                        } else {
                            match guard_holds(c, &w.env) {
                                Some(true) => {}
                                Some(false) => {
                                    w.trail.push(here);
                                    w.at += 1;
                                    continue;
                                }
                                // A branch on data between two ways that
                                // only compute registers (`data_region`):
                                // what they write is unknown at the join.
                                None if matches!(c.op, Op::Bra(_)) && self.data_region(here).is_some() => {
                                    let region = self.data_region(here).expect("found above");
                                    w.trail.push(here);
                                    for &r in &region.defs {
                                        w.env[r] = V::U(here);
                                        w.sym.remove(&r);
                                        w.written.insert(r);
                                    }
                                    w.trail.extend(region.body.iter().copied());
                                    w.at = region.join;
                                    continue;
                                }
                                None => {
                                    return Err(format!(
                                    "the spin loop's path has an instruction whose guard is unknown, `{}` (line {})",
                                    self.text(c.span),
                                    self.line(c.span)
                                ))
                                }
                            }
                        }
                    }
                    match &c.op {
                        Op::Defs(defs) => {
                            let mut vals = Vec::new();
                            for (_, e) in defs {
                                match self.sym_eval(e, &w, here, place, opaque) {
                                    Some(v) => vals.push(v),
                                    None => {
                                        return Err(format!(
                                            "the spin loop combines the polled value with an unknown value at `{}` (line {})",
                                            self.text(c.span),
                                            self.line(c.span)
                                        ))
                                    }
                                }
                            }
                            for ((r, _), v) in defs.iter().zip(vals) {
                                w.written.insert(*r);
                                match v {
                                    S::V(v, _) => {
                                        w.env[*r] = v;
                                        w.sym.remove(r);
                                    }
                                    S::E(x) => {
                                        w.env[*r] = V::U(p);
                                        w.sym.insert(*r, x);
                                    }
                                }
                            }
                        }
                        Op::Unknown(ds) => {
                            for r in ds {
                                w.env[*r] = V::U(here);
                                w.sym.remove(r);
                                w.written.insert(*r);
                            }
                        }
                        Op::Nop => {}
                        Op::Bra(l) => {
                            w.trail.push(here);
                            w.at = self.labels[l];
                            continue;
                        }
                        _ if poll_at(here, &w.env) => {
                            // The same poll: round again (with the
                            // registers this turn left). Another poll of the
                            // address (the loop's own in a rotated loop, or
                            // the next loop's): this poll's loop is left,
                            // and that poll is walked in turn.
                            w.trail.push(here);
                            queue.push((here, w.env.clone()));
                            if here == p {
                                again = true;
                                round = true;
                            } else {
                                leave.push(conjunction(&w.conds));
                            }
                            break false;
                        }
                        _ => break true,
                    }
                    w.trail.push(here);
                    w.at += 1;
                };
                path.extend(w.trail.iter().copied());
                if !left {
                    written.extend(w.written.iter().copied());
                    fail_path.extend(w.trail.iter().copied());
                }
                if left {
                    for &r in w.sym.keys() {
                        w.env[r] = V::U(p);
                    }
                    match &exit {
                        None => exit = Some((w.at, w.env)),
                        Some((x, e)) if *x == w.at => {
                            differ.extend((0..e.len()).filter(|&r| e[r] != w.env[r]));
                        }
                        Some((x, _)) => {
                            let line = |at: usize| self.line(self.code[at.min(self.code.len() - 1)].span);
                            return Err(format!(
                                "the spin loop is left at two places, lines {} and {}",
                                line(*x),
                                line(w.at)
                            ));
                        }
                    }
                    leave.push(conjunction(&w.conds));
                }
            }
            // Only a poll that comes back to itself waits.
            let cond = round.then(|| {
                leave
                    .into_iter()
                    .reduce(|a, b| PExpr::Bin(BOp::Or, Box::new(a), Box::new(b)))
                    .unwrap_or(PExpr::Int(0))
            });
            match polls.get(&p) {
                Some(c) if *c != cond => {
                    return Err("the spin loop's exit condition changes from one turn to the next".into())
                }
                _ => {
                    polls.insert(p, cond);
                }
            }
        }
        if !again {
            return Ok(None);
        }
        let Some((exit, mut env)) = exit else {
            return Err("the spin loop is never left".into());
        };
        for r in differ {
            env[r] = V::U(pc);
        }
        Ok(Some(SpinLoop {
            exit,
            env,
            polls,
            path,
            addr: me,
            written,
            fail_path,
        }))
    }

    /// `e` on a spin loop's path `w` ([`S`]); `None` when it combines the
    /// polled value with a value the pre-evaluation does not know.
    /// `opaque`: the condition is never emitted (grid sync's poll), so a
    /// value the pre-evaluation does not know may take part in it.
    fn sym_eval(&self, e: &PExpr, w: &Walk, at: usize, place: (i64, i64), opaque: bool) -> Option<S> {
        fn uses(e: &PExpr, sym: &BTreeMap<usize, PExpr>) -> bool {
            match e {
                PExpr::Reg(r) => sym.contains_key(r),
                PExpr::Un(_, x) => uses(x, sym),
                PExpr::Bin(_, a, b) => uses(a, sym) || uses(b, sym),
                _ => false,
            }
        }
        if !uses(e, &w.sym) {
            let from = match e {
                PExpr::Reg(r) if !w.written.contains(r) => Some(*r),
                _ => None,
            };
            return Some(S::V(self.eval(e, &w.env, at, place), from));
        }
        let lift = |t: &Self, x: &PExpr| -> Option<PExpr> {
            match t.sym_eval(x, w, at, place, opaque)? {
                S::E(x) => Some(x),
                S::V(V::K(_, false), Some(r)) => Some(PExpr::Reg(r)),
                S::V(V::K(v, false), None) => Some(PExpr::Int(v)),
                S::V(..) => opaque.then_some(PExpr::Unknown),
            }
        };
        Some(S::E(match e {
            PExpr::Reg(r) => w.sym[r].clone(),
            PExpr::Un(op, x) => PExpr::Un(*op, Box::new(lift(self, x)?)),
            PExpr::Bin(op, a, b) => PExpr::Bin(*op, Box::new(lift(self, a)?), Box::new(lift(self, b)?)),
            _ => unreachable!("only registers, operators and constants"),
        }))
    }

    /// What a location that a spin loop polls needs (docs/ptx.md, "Spin
    /// loops"): its first value known, every store and atomic that writes
    /// it with known values, atomics the litmus language has (`add`,
    /// `exch`, `cas` on integers), and no atomic left out for an unknown
    /// address or guard (it might write the location).
    fn check_awaited(&mut self, code: &[CInstr], regions: &[Region]) {
        if self.awaited.is_empty() {
            return;
        }
        let awaited: Vec<(LocKey, usize)> = self.awaited.iter().map(|(l, pc)| (*l, *pc)).collect();
        let name = |l: LocKey| format!("`{}+{}`", regions[l.0].name, l.1);
        for &(l, pc) in &awaited {
            if regions[l.0].initial(l.1).is_none() {
                let d = Diagnostic::error(
                    code[pc].span,
                    format!(
                        "inconclusive: this spin loop polls {}, whose initializer the front end does not read",
                        name(l)
                    ),
                );
                self.errors.entry(pc).or_insert(d);
            }
        }
        let first = awaited[0].1;
        for (pc, c) in code.iter().enumerate() {
            let Op::Mem { kind, rmw, ty, .. } = &c.op else {
                continue;
            };
            let site = &self.sites[pc];
            if site.dropped && kind.is_atomic() && *kind != MemKind::Load {
                let d = Diagnostic::error(
                    c.span,
                    format!(
                        "inconclusive: this atomic's address or guard is unknown, so it might write {}, which the spin loop at line {} polls",
                        name(awaited[0].0),
                        self.line(code[first].span)
                    ),
                );
                self.errors.entry(pc).or_insert(d);
                continue;
            }
            if matches!(kind, MemKind::Read | MemKind::Load) {
                continue;
            }
            let Some(&(l, spin)) = awaited
                .iter()
                .find(|(l, _)| site.addrs.values().flatten().any(|m| m == l))
            else {
                continue;
            };
            let why = if let Some(o) = site.vals_unknown {
                let (from, _) = self.origin(o);
                Some(format!("the value it writes depends on an unknown value, from {from}"))
            } else if *kind == MemKind::Rmw && (ty.float || !matches!(rmw, Some("add" | "exch" | "cas"))) {
                Some(format!(
                    "`{}` is not modelled with its value (only integer `add`, `exch` and `cas` are)",
                    self.text(c.span)
                ))
            } else {
                None
            };
            if let Some(why) = why {
                let d = Diagnostic::error(
                    c.span,
                    format!(
                        "inconclusive: this instruction writes {}, which the spin loop at line {} polls, and {why}",
                        name(l),
                        self.line(code[spin].span)
                    ),
                );
                self.errors.entry(pc).or_insert(d);
            }
        }
    }

    /// Records a spin loop this thread ran ([`Tracer::spin_loop`]): every
    /// instruction on its paths is emitted as it is, and each poll gets
    /// its condition (the same for every thread and visit, or the kernel
    /// is inconclusive). Returns the loop's exit and the registers there;
    /// `None` after failing the instruction.
    fn enter_spin(&mut self, spin: SpinLoop, place: (i64, i64)) -> Option<(usize, Vec<V>)> {
        let Some(l) = self.resolve(spin.addr) else {
            unreachable!("the poll's address was resolved")
        };
        for (&p, cond) in &spin.polls {
            let site = &self.sites[p];
            match &site.spin {
                c if site.poll && c != cond => {
                    self.fail(
                        p,
                        "the spin loop's exit condition differs between threads or visits",
                        V::K(0, false),
                        place,
                    );
                    return None;
                }
                _ => {
                    self.sites[p].spin = cond.clone();
                    self.sites[p].poll = true;
                }
            }
            self.awaited.entry(l).or_insert(p);
            let site = &mut self.sites[p];
            site.addrs.insert(spin.addr, vec![l]);
            note(&mut site.place, &mut site.place_varies, self.g, spin.addr);
        }
        for &at in &spin.path {
            let site = &mut self.sites[at];
            site.visited = true;
            site.executed = true;
            site.in_spin = true;
            if matches!(self.code[at].op, Op::Bra(_)) {
                site.place_varies = true;
            }
        }
        Some((spin.exit, spin.env))
    }

    /// An access of the grid workspace by thread `place` at `pc`, after
    /// the effect `before`: nvcc's grid sync ([`Grid`]), or the kernel is
    /// inconclusive. The master's `atom.add` on the `barrier` word follows
    /// a block barrier (the grid sync's first); its poll is a spin loop on
    /// the word that is left at a block barrier (the second). Returns
    /// where the thread goes on and its registers; `None` after failing.
    #[allow(clippy::too_many_arguments)]
    fn grid_access(
        &mut self,
        pc: usize,
        (kind, rmw, ndst): (MemKind, Option<&str>, usize),
        locs: &[LocKey],
        before: Option<usize>,
        env: &[V],
        a: i64,
        place: (i64, i64),
    ) -> Option<(usize, Vec<V>)> {
        let word = locs.len() == 1 && locs[0].1 == 4;
        // A `bar.sync 0`/`barrier.sync 0` of the whole block (its operand
        // a constant 0: nvcc's `__barrier_sync(0)`).
        let block_barrier = |t: &Self, b: usize| matches!(&t.code[b].op, Op::Bar { name, count: None, sel: Some(PExpr::Int(0)), .. } if name.contains("sync"));
        // A barrier found to be a grid sync's must not have been passed
        // by a thread before (which then did not count it as one).
        let mark = |t: &mut Self, at: usize, role: Grid| -> bool {
            match t.sites[at].grid {
                Some(r) => r == role,
                None if matches!(role, Grid::Begin | Grid::End) && t.sites[at].place.iter().any(|(g, _)| *g != t.g) => {
                    false
                }
                None => {
                    t.sites[at].grid = Some(role);
                    if role == Grid::Begin {
                        // This thread just passed it.
                        t.grid_open = true;
                    }
                    true
                }
            }
        };
        let mut env = env.to_vec();
        match kind {
            MemKind::Rmw if word && rmw == Some("add") => {
                let ok = before.is_some_and(|b| block_barrier(self, b) && mark(self, b, Grid::Begin));
                if !ok || !mark(self, pc, Grid::Arrival) {
                    self.fail(
                        pc,
                        "this arrival on the grid workspace does not come right after a block barrier, as in nvcc's grid sync",
                        V::K(0, false),
                        place,
                    );
                    return None;
                }
                if let Op::Mem { dsts, .. } = &self.code[pc].op {
                    for r in dsts {
                        env[*r] = V::U(pc);
                    }
                }
                Some((pc + 1, env))
            }
            MemKind::Load if word && ndst == 1 => {
                let scope = self.poll_scope(pc);
                let spin = match self.spin_loop(pc, &env, a, place, true, &scope.written) {
                    Ok(Some(s)) if s.exit < self.code.len() && block_barrier(self, s.exit) => s,
                    _ => {
                        self.fail(
                            pc,
                            "this poll of the grid workspace is not a spin loop left at a block barrier, as in nvcc's grid sync",
                            V::K(0, false),
                            place,
                        );
                        return None;
                    }
                };
                let polls_ok = spin.polls.keys().all(|&p| mark(self, p, Grid::Poll));
                if !polls_ok || !mark(self, spin.exit, Grid::End) {
                    self.fail(
                        pc,
                        "this poll of the grid workspace is not nvcc's grid sync",
                        V::K(0, false),
                        place,
                    );
                    return None;
                }
                // The loop is not emitted (the `grid.sync` stands for it):
                // no poll, no branch of a path that goes round. The other
                // instructions of its paths are (register arithmetic the
                // thread runs on its way out, which nvcc may put there);
                // what the paths that go round compute is unknown from the
                // exit on.
                for &at in &spin.path {
                    let bra = matches!(self.code[at].op, Op::Bra(_));
                    if spin.polls.contains_key(&at) || (bra && spin.fail_path.contains(&at)) {
                        continue;
                    }
                    let site = &mut self.sites[at];
                    site.visited = true;
                    site.executed = true;
                    if bra {
                        site.place_varies = true;
                    }
                }
                for &p in spin.polls.keys() {
                    self.sites[p].visited = true;
                    self.sites[p].executed = true;
                }
                let mut env = spin.env;
                for r in spin.written {
                    env[r] = V::U(pc);
                }
                Some((spin.exit, env))
            }
            _ => {
                self.fail(
                    pc,
                    "the grid workspace is accessed other than by nvcc's grid sync",
                    V::K(0, false),
                    place,
                );
                None
            }
        }
    }

    /// Every thread ran each grid sync's parts in order ([`Grid`]): after
    /// its first block barrier the master's arrival or the second barrier,
    /// after the arrival the poll, before the second barrier the poll or
    /// the first barrier. Else the kernel is inconclusive at the
    /// instruction that broke the shape.
    fn check_grid(&mut self, code: &[CInstr]) {
        let role = |pc: usize| self.sites[pc].grid;
        let plain = |a: usize, b: usize| match (role(a), role(b)) {
            (Some(Grid::Begin), r) => matches!(r, Some(Grid::Arrival | Grid::End)),
            (Some(Grid::Arrival), r) => r == Some(Grid::Poll),
            (l, Some(Grid::End)) => matches!(l, Some(Grid::Begin | Grid::Poll)),
            (l, Some(Grid::Arrival)) => l == Some(Grid::Begin),
            _ => true,
        };
        // The split form (`grid.barrier_arrive()`, other code, then
        // `barrier_wait()`: sync.h's `sync_grids_arrive`/`_wait`): the
        // arrival still comes right after the first barrier, and each
        // thread alternates the two barriers (`grid_bad`).
        self.grid_split = self.follows.iter().any(|&(a, b)| !plain(a, b));
        let mut bad: BTreeSet<usize> = self.grid_bad.clone();
        for &(a, b) in &self.follows {
            let ok = if self.grid_split {
                role(b) != Some(Grid::Arrival) || role(a) == Some(Grid::Begin)
            } else {
                plain(a, b)
            };
            if !ok {
                bad.insert(b);
            }
        }
        for pc in bad {
            let d = Diagnostic::error(
                code[pc].span,
                "inconclusive: in some thread this instruction breaks the shape of nvcc's grid sync (a block barrier, the block master's arrival on the grid workspace and its poll, a block barrier)",
            );
            self.errors.entry(pc).or_insert(d);
        }
    }

    /// Whether `bytes` bytes from location `l` stay inside its region
    /// (an access or copy that runs past a variable's end touches memory
    /// the model does not have: inconclusive, as an address in no region).
    fn fits(&self, l: LocKey, bytes: u32) -> bool {
        let size = self.regions[l.0].extent();
        l.1.checked_add(i64::from(bytes)).is_some_and(|end| end <= size)
    }

    fn resolve(&self, a: i64) -> Option<LocKey> {
        (self.regions.iter().enumerate())
            .find_map(|(k, r)| (a >= r.base - r.below() && a < r.base + r.extent()).then_some((k, a - r.base)))
    }

    fn thread(&mut self, nregs: usize, bid: i64, tid: i64) {
        let place = (bid, tid);
        self.prev_effect = None;
        self.grid_open = false;
        let mut env = vec![V::U(NEVER); nregs];
        let mut pc = 0usize;
        let mut steps = 0u64;
        let mut pending: Vec<(usize, Vec<usize>, usize)> = Vec::new();
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
            // Registers a retry loop left with values that depend on how
            // often it polled: unknown from its exit on.
            pending.retain(|(exit, differ, from)| {
                if *exit != pc {
                    return true;
                }
                for &r in differ {
                    env[r] = V::U(*from);
                }
                false
            });
            self.sites[pc].visited = true;
            let c = &self.code[pc];
            if let Some((neg, p)) = c.guard {
                match env[p] {
                    V::K(v, ptr) => {
                        if ptr {
                            self.fail(
                                pc,
                                "the guard is computed from a pointer parameter (pass `--param` if it is an integer)",
                                V::K(0, true),
                                place,
                            );
                            return;
                        }
                        if matches!(c.op, Op::Bra(_)) {
                            // Whether this thread takes the branch: a
                            // function of its place unless it varies
                            // (emit.rs then writes the condition over the
                            // place, which the explorer's static analyses
                            // resolve per thread).
                            let site = &mut self.sites[pc];
                            note(
                                &mut site.place,
                                &mut site.place_varies,
                                self.g,
                                i64::from((v != 0) != neg),
                            );
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
                            // A warp-collective instruction (`@p elect.sync`):
                            // which lanes run it together is not data.
                            Op::Unknown(_) if c.collective => {
                                self.fail(pc, "whether this warp-collective instruction runs", u, place);
                                return;
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
                            // A branch whose two ways only compute
                            // registers until they meet: the data it
                            // chooses between is data (docs/ptx.md,
                            // "Unknown values").
                            Op::Bra(_) if self.data_region(pc).is_some() => {
                                let region = self.data_region(pc).expect("looked for above");
                                let v = match u {
                                    V::U(o) | V::T(o) => V::U(o),
                                    k => k,
                                };
                                for &r in &region.defs {
                                    env[r] = v;
                                }
                                // The explorer takes one of the ways (the
                                // emitted condition reads a register the
                                // checker does not know): either has no
                                // effect. The branches keep their register
                                // conditions (not one over the place, which
                                // this thread did not note).
                                for &i in region.body.iter().chain([&pc]) {
                                    let site = &mut self.sites[i];
                                    site.visited = true;
                                    site.executed = true;
                                    if matches!(self.code[i].op, Op::Bra(_)) {
                                        site.place_varies = true;
                                    }
                                }
                                pc = region.join;
                                continue;
                            }
                            op => {
                                let what = if matches!(op, Op::Bra(_)) {
                                    "the branch condition"
                                } else if c.collective {
                                    // `@p elect.sync`: which lanes run it
                                    // together is not data.
                                    "whether this warp-collective instruction runs"
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
            if self.register_step(&c.op, &mut env, pc, place) {
                pc += 1;
                continue;
            }
            // An instruction with an effect: noted after the last one.
            let before = self.prev_effect;
            if !matches!(c.op, Op::Nop | Op::Bra(_)) {
                if let Some(b) = before {
                    self.follows.insert((b, pc));
                }
                self.prev_effect = Some(pc);
                // Each thread passes a grid sync's first and second block
                // barriers in turn.
                match self.sites[pc].grid {
                    Some(Grid::Begin) if self.grid_open => {
                        self.grid_bad.insert(pc);
                    }
                    Some(Grid::Begin) => self.grid_open = true,
                    Some(Grid::End) if !self.grid_open => {
                        self.grid_bad.insert(pc);
                    }
                    Some(Grid::End) => self.grid_open = false,
                    _ => {}
                }
            }
            match &c.op {
                Op::Defs(_) | Op::Unknown(_) => unreachable!("register steps are taken above"),
                Op::Trap => {
                    self.fail(
                        pc,
                        "`trap` is reached: the kernel aborts here, which is not modelled (nvcc's grid sync traps where the launch is not cooperative: pass `--cooperative` if it is)",
                        V::K(0, false),
                        place,
                    );
                    return;
                }
                Op::Nop | Op::Fence { .. } | Op::Group { .. } => {}
                Op::Copy { dst, src, bulk, plain } => {
                    let mut pair = [(0i64, (0usize, 0i64)); 2];
                    let (dst_shared, src_shared) = Op::copy_spaces(bulk);
                    for (k, (e, shared, what)) in [(dst, dst_shared, "destination"), (src, src_shared, "source")]
                        .into_iter()
                        .enumerate()
                    {
                        let a = match self.eval(e, &env, pc, place) {
                            V::K(a, _) => a,
                            u => {
                                self.fail(pc, &format!("the copy's {what} address"), u, place);
                                return;
                            }
                        };
                        match self.resolve(a) {
                            Some(l) if self.regions[l.0].shared == shared => pair[k] = (a, l),
                            _ => {
                                let space = if shared {
                                    "a `.shared` variable"
                                } else {
                                    "global memory"
                                };
                                self.fail(
                                    pc,
                                    &format!("the copy's {what} address {a:#x} lies in no {space} of the kernel"),
                                    V::K(0, false),
                                    place,
                                );
                                return;
                            }
                        }
                    }
                    // A bulk copy's size (the transactions its
                    // `complete_tx` counts) and mbarrier must be known.
                    let (mut bytes, mut bar) = (-1, (-1, None));
                    if let Some(b) = bulk {
                        let Some(n) = self.barrier_operand(&b.bytes, &env, pc, place, "the copy's size") else {
                            return;
                        };
                        bytes = n;
                        if let Some(a) = &b.bar {
                            let Some((a, l)) = self.mbar_loc(a, &env, pc, place) else {
                                return;
                            };
                            bar = (a, Some(l));
                        }
                    }
                    // The bytes written and read (PTX ISA, "cp.async": a
                    // copy writes `cp-size` bytes and reads `src-size` of
                    // them, or none under a true `ignore-src`; a bulk copy
                    // reads and writes its size), and the `cp.async`
                    // operand that chose the read (in the key).
                    if bulk.is_some() && bytes <= 0 {
                        self.fail(
                            pc,
                            &format!("the copy's size {bytes}, not positive (PTX requires a positive multiple of 16)"),
                            V::K(0, false),
                            place,
                        );
                        return;
                    }
                    let clamp = |n: i64| n.clamp(0, i64::from(u32::MAX)) as u32;
                    let (dst_bytes, src_bytes, chosen) = match plain {
                        None => (clamp(bytes), clamp(bytes), bytes),
                        Some(PlainSize { bytes: cp, src }) => match src.operand() {
                            None => (*cp, *cp, -1),
                            Some((e, ignore)) => {
                                let what = if ignore {
                                    "the copy's `ignore-src` predicate"
                                } else {
                                    "the copy's `src-size`"
                                };
                                // A value from a pointer parameter is a guess
                                // (as for a barrier operand).
                                let Some(v) = self.barrier_operand(e, &env, pc, place, what) else {
                                    return;
                                };
                                if !ignore && !(0..=i64::from(*cp)).contains(&v) {
                                    self.fail(
                                        pc,
                                        &format!("the copy's `src-size` {v}, outside 0..={cp} (undefined behaviour)"),
                                        V::K(0, false),
                                        place,
                                    );
                                    return;
                                }
                                let read = match (ignore, v) {
                                    (true, 0) => *cp,
                                    (true, _) => 0,
                                    (false, v) => v as u32,
                                };
                                (*cp, read, v)
                            }
                        },
                    };
                    for (l, n, what) in [(pair[0].1, dst_bytes, "destination"), (pair[1].1, src_bytes, "source")] {
                        if n > 0 && !self.fits(l, n) {
                            let name = self.regions[l.0].name.clone();
                            self.fail(
                                pc,
                                &format!("the copy's {n} bytes at its {what} run past the end of `{name}`"),
                                V::K(0, false),
                                place,
                            );
                            return;
                        }
                    }
                    let key = (pair[0].0, pair[1].0, chosen, bar.0);
                    for (l, n) in [(pair[0].1, dst_bytes), (pair[1].1, src_bytes)] {
                        let cuts = self.cuts.entry(l.0).or_default();
                        cuts.insert(l.1);
                        if n > 0 {
                            self.copied.insert((l, n));
                            cuts.insert(l.1 + i64::from(n));
                            // A polled word the copy touches is accessed
                            // with another width (the check in `trace`).
                            self.widths.entry(l).or_default().insert(n);
                        }
                    }
                    let locs = CopyLocs {
                        dst: pair[0].1,
                        dst_bytes,
                        src: pair[1].1,
                        src_bytes,
                        bar: bar.1,
                    };
                    let site = &mut self.sites[pc];
                    let ix = match site.copies.iter().position(|(k, _)| *k == key) {
                        Some(i) => i,
                        None => {
                            site.copies.push((key, locs));
                            site.copies.len() - 1
                        }
                    };
                    note(&mut site.place, &mut site.place_varies, self.g, ix as i64);
                }
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
                    vals,
                    rmw,
                    shared,
                    ..
                } => {
                    match self.eval(addr, &env, pc, place) {
                        V::K(a, _) => {
                            let mut locs = Vec::new();
                            for e in 0..*elems {
                                let at = a.wrapping_add((e * esize) as i64);
                                match self.resolve(at) {
                                    Some(l) if shared.is_some_and(|sh| sh != self.regions[l.0].shared) => {
                                        let (name, space) = (
                                            &self.regions[l.0].name,
                                            if *shared == Some(true) {
                                                "`.shared`"
                                            } else {
                                                "`.global`"
                                            },
                                        );
                                        let why = format!(
                                            "the {space} access's address {at:#x} lies in `{name}`, a variable of the other state space (undefined behaviour)"
                                        );
                                        self.fail(pc, &why, V::K(0, false), place);
                                        return;
                                    }
                                    Some(l) if !self.fits(l, (*esize).max(1)) => {
                                        let name = self.regions[l.0].name.clone();
                                        self.fail(
                                            pc,
                                            &format!("the access at {at:#x} runs past the end of `{name}`"),
                                            V::K(0, false),
                                            place,
                                        );
                                        return;
                                    }
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
                            if self.workspace.is_some_and(|w| locs.iter().any(|l| l.0 == w)) {
                                match self.grid_access(pc, (*kind, *rmw, dsts.len()), &locs, before, &env, a, place) {
                                    Some((next, e)) => {
                                        env = e;
                                        pc = next;
                                        continue;
                                    }
                                    None => return,
                                }
                            }
                            for &l in &locs {
                                self.widths.entry(l).or_default().insert((*esize).max(1));
                                let cuts = self.cuts.entry(l.0).or_default();
                                cuts.insert(l.1);
                                if !kind.is_atomic() {
                                    cuts.insert(l.1 + i64::from((*esize).max(1)));
                                }
                            }
                            if matches!(kind, MemKind::Store | MemKind::Rmw) {
                                for &l in &locs {
                                    self.strong_writes.insert((l, (*esize).max(1), pc));
                                }
                            }
                            if !kind.is_atomic() {
                                for &l in &locs {
                                    let u = self.elem_uses.entry((l, *esize)).or_default();
                                    LocUse::add(&mut u.users, self.g);
                                    if *kind == MemKind::Write {
                                        LocUse::add(&mut u.writers, self.g);
                                    }
                                }
                            }
                            let site = &mut self.sites[pc];
                            site.addrs.insert(a, locs);
                            note(&mut site.place, &mut site.place_varies, self.g, a);
                            note_addr(site, self.g, a);
                            if !vals.is_empty() && site.vals_unknown.is_none() {
                                let vs: Vec<V> = vals.iter().map(|e| self.eval(e, &env, pc, place)).collect();
                                let site = &mut self.sites[pc];
                                match vs.iter().find(|v| !matches!(v, V::K(_, false))) {
                                    Some(V::U(o) | V::T(o)) => site.vals_unknown = Some(*o),
                                    Some(_) => site.vals_unknown = Some(pc),
                                    None => {
                                        site.vals.insert(
                                            vs.iter()
                                                .map(|v| match v {
                                                    V::K(x, _) => *x,
                                                    _ => 0,
                                                })
                                                .collect(),
                                        );
                                    }
                                }
                            }
                            let scope = (*kind == MemKind::Load && *elems == 1 && dsts.len() == 1)
                                .then(|| self.poll_scope(pc))
                                .filter(|s| s.again);
                            if let Some(scope) = scope {
                                match self.spin_loop(pc, &env, a, place, false, &scope.written) {
                                    Ok(None) => {}
                                    Ok(Some(spin)) => {
                                        let Some((exit, e)) = self.enter_spin(spin, place) else {
                                            return;
                                        };
                                        env = e;
                                        pc = exit;
                                        continue;
                                    }
                                    Err(why) => {
                                        self.fail(pc, &why, V::K(0, false), place);
                                        return;
                                    }
                                }
                            }
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
                Op::MBar {
                    addr, args, dst, poll, ..
                } => {
                    if self.mbar_addr(addr, &env, pc, place).is_none() {
                        return;
                    }
                    for arg in args {
                        match arg {
                            MArg::Value(e) => {
                                let Some(v) = self.barrier_operand(e, &env, pc, place, "this operand") else {
                                    return;
                                };
                                self.sites[pc].counts.insert(v);
                                if *poll && !(0..=1).contains(&v) {
                                    self.fail(pc, &format!("the parity is {v}, not 0 or 1"), V::K(0, false), place);
                                    return;
                                }
                            }
                            MArg::Token(e) => {
                                if let u @ (V::U(_) | V::K(..)) = self.eval(e, &env, pc, place) {
                                    self.fail(pc, "the token (no `mbarrier.arrive` returned it unchanged)", u, place);
                                    return;
                                }
                            }
                        }
                    }
                    if *poll {
                        let p = dst.expect("a poll has a predicate");
                        match self.retry_loop(pc, &env, place) {
                            Ok((exit, differ)) => {
                                self.sites[pc].blocking = true;
                                if !differ.is_empty() {
                                    pending.push((exit, differ, pc));
                                }
                            }
                            Err(why) => {
                                self.fail(pc, &why, V::K(0, false), place);
                                return;
                            }
                        }
                        env[p] = V::K(1, false);
                    } else if let Some(r) = dst {
                        // The litmus `mbarrier.arrive_drop` returns no
                        // token: the state it returns is unknown here.
                        env[*r] = match &c.op {
                            Op::MBar { name, .. } if name == "mbarrier.arrive_drop" => V::U(pc),
                            _ => V::T(pc),
                        };
                    }
                }
                Op::Bar {
                    name,
                    sel,
                    count,
                    dst,
                    args,
                    pdst,
                    leader,
                    ..
                } => {
                    let mut mask = None;
                    if let Some(s) = sel {
                        let Some(v) = self.barrier_operand(s, &env, pc, place, "the barrier operand") else {
                            return;
                        };
                        let site = &mut self.sites[pc];
                        site.sels.insert(v);
                        note(&mut site.place, &mut site.place_varies, self.g, v);
                        mask = Some(v);
                    }
                    if name == "elect.sync" {
                        let l = self.elect(place, mask.unwrap_or(0));
                        let lane = place.1 % 32;
                        env[dst.expect("elect.sync has a leader register")] = V::K(l, false);
                        if let Some(p) = leader {
                            env[*p] = V::K(i64::from(l == lane), false);
                        }
                        pc += 1;
                        continue;
                    }
                    if let Some(n) = count {
                        let Some(v) = self.barrier_operand(n, &env, pc, place, "the thread count") else {
                            return;
                        };
                        // PTX ISA, `barrier{.cta}`: a thread count must be
                        // a multiple of the warp size (ptxas rejects an
                        // immediate one that is not; one in a register is
                        // undefined behaviour), since the barrier counts
                        // whole warps (review, session 37: `bar.sync 1,
                        // %ntid.x` at 48 threads was `ok`).
                        if v % 32 != 0 {
                            let why = format!(
                                "the thread count {v} is not a multiple of the warp size (undefined behaviour: PTX ISA, `barrier{{.cta}}`)"
                            );
                            self.fail(pc, &why, V::K(v, false), place);
                            return;
                        }
                        self.sites[pc].counts.insert(v);
                    }
                    // A shuffle's source lane decides which lane it
                    // reads (a lane outside the phase is a finding).
                    let mut known = BTreeMap::new();
                    for (i, (a, _)) in args.iter().enumerate().filter(|(_, (_, known))| *known) {
                        let what = if i == 1 {
                            "the shuffle's source lane"
                        } else {
                            "the shuffle's clamp"
                        };
                        let Some(v) = self.barrier_operand(a, &env, pc, place, what) else {
                            return;
                        };
                        self.sites[pc].args.entry(i).or_default().insert(v);
                        known.insert(i, v);
                        // The width operand is `32 - (c >> 8)`: its clamp.
                        if let (2, PExpr::Bin(_, _, sh)) = (i, a) {
                            let PExpr::Bin(_, c, _) = sh.as_ref() else { continue };
                            let c = match self.eval(c, &env, pc, place) {
                                V::K(c, _) => c,
                                _ => continue,
                            };
                            if !crate::ops::shfl_clamp_ok(name, c) {
                                let why = format!(
                                    "the shuffle's clamp operand {c:#x}, not a segment form nvcc writes (docs/ptx.md)"
                                );
                                self.fail(pc, &why, V::K(v, false), place);
                                return;
                            }
                        }
                    }
                    // A reduction over the phase, or a warp intrinsic's
                    // result: not known here (the explorer computes it
                    // from the other lanes' values), but for a shuffle
                    // from a lower lane (`Tracer::shuffled`).
                    let value = match (mask, args.first()) {
                        (Some(m), Some((v, _))) if name.starts_with("__") => {
                            let v = self.eval(v, &env, pc, place);
                            self.shuffled(place, m, name, v, &known)
                        }
                        _ => V::U(pc),
                    };
                    if let Some(r) = dst {
                        env[*r] = match value {
                            V::U(_) => V::U(pc),
                            k => k,
                        };
                    }
                    if let Some(r) = pdst {
                        env[*r] = V::U(pc);
                    }
                }
            }
            pc += 1;
        }
    }
}
