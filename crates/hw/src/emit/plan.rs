//! The placement of a test on a CUDA launch: which mapping (a litmus thread
//! is a warp, or a lane), the grids (launches) with their shape, where each
//! location lives, and the checks that refuse what has no exact CUDA form.

use super::{refuse, Refusal};
use bc_graph::{BarrierResult, CExpr, InstrKind, Program, ThreadId, ThreadKind};
use bc_models::Scope;
use bc_syntax::{Litmus, Stmt, StmtKind, ThreadForm};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// CUDA threads per warp (the CUDA models' warp size).
pub const WARP: u32 = 32;

/// How litmus threads become CUDA threads (docs/hardware.md, "Mapping").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mapping {
    /// A litmus thread is one warp of 32 CUDA threads; lane 0 carries its
    /// memory and barrier-object operations and broadcasts its registers.
    Warp,
    /// A litmus thread is one CUDA thread (tests with `__syncwarp`, whose
    /// masks name lanes).
    Lane,
}

impl Mapping {
    pub fn name(self) -> &'static str {
        match self {
            Mapping::Warp => "warp",
            Mapping::Lane => "lane",
        }
    }
    /// CUDA threads per litmus thread.
    pub fn width(self) -> u32 {
        match self {
            Mapping::Warp => WARP,
            Mapping::Lane => 1,
        }
    }
}

/// One launch: the explicit `thread`s together, or one `kernel`.
#[derive(Clone, Debug)]
pub struct Grid {
    /// The C name of its `__global__` function.
    pub func: String,
    /// The named kernel (a host `launch`es it), or `None` (started at launch).
    pub kernel: Option<u32>,
    /// Its threads in CUDA order: block-major, then by `tid`.
    pub threads: Vec<ThreadId>,
    pub blocks: u32,
    /// Litmus threads per block.
    pub ntid: u32,
    /// Blocks per cluster (1: no cluster launch attribute).
    pub cluster: u32,
    pub cooperative: bool,
    /// The code bodies its threads run.
    pub codes: Vec<usize>,
}

pub struct Plan<'a> {
    pub lit: &'a Litmus,
    pub prog: &'a Program,
    pub mapping: Mapping,
    pub grids: Vec<Grid>,
    /// Declared scope of each `var` declaration.
    pub var_scope: Vec<Scope>,
    /// A host thread touches a location: every location then lives in
    /// mapped host memory and is accessed with system scope.
    pub mapped: bool,
    /// The stream numbers host `launch`es name, in order (index = CUDA stream).
    pub streams: Vec<i64>,
    /// Instruction statement name by the start of its span.
    pub stmt_names: HashMap<u32, String>,
    /// Per barrier declaration index: the model's predefined barrier id
    /// (`None` for declared barriers and `__syncwarp` mask sites).
    pub predefined: Vec<Option<i64>>,
    /// The most registers of any body (at least 1).
    pub max_regs: usize,
    /// The test uses `grid.sync` (cooperative groups; nvcc `-rdc=true`).
    pub grid_sync: bool,
    /// The size of the scratch buffers of `cp.async.bulk` (0: no copies).
    pub copy_bytes: u32,
    /// Per `var` declaration, the bytes a kernel-only file declares for
    /// it: 8 (one `long long`), or the largest bulk copy that names it as
    /// destination or source, so that every copy stays inside its
    /// variable as PTX requires (the PTX front end refuses a copy that
    /// runs past its variable's end). Unused by a harness.
    pub var_bytes: Vec<u32>,
    /// A kernel-only file (`emit cuda --kernel-only`), read by the PTX
    /// front end rather than run: see `forms` for what it changes.
    pub kernel_only: bool,
}

/// What a `cp.async.bulk` site copies: its destination and source
/// location declarations, its barrier declaration (read off the site's
/// agent code, `bc_graph::copies::add_copy_agents`; `u32::MAX` for a
/// `cp.async`, which names none).
pub fn copy_site(prog: &Program, site: u32) -> (u32, u32, u32) {
    let code = &prog.codes[prog.copy_code(site, 0).index()];
    let (mut dst, mut src, mut bar) = (0, 0, u32::MAX);
    for i in &code.instrs {
        match &i.kind {
            InstrKind::Read { decl } => src = *decl,
            InstrKind::Write { decl } => dst = *decl,
            // The barrier a copy or an arrive agent completes on (not a
            // start barrier of another agent).
            InstrKind::Barrier {
                op: bc_graph::BarrierOp::CompleteTx(_) | bc_graph::BarrierOp::Arrive(_),
                sel: bc_graph::BarrierSel::Decl(d),
                ..
            } if *d < prog.copy_first_decl => bar = *d,
            _ => {}
        }
    }
    (dst, src, bar)
}

/// The copies' scratch buffers: as large as the largest copy. A copy's
/// data goes from a global scratch buffer to a shared one, whatever its
/// litmus locations (the harness observes completion and hangs, not the
/// bytes; the litmus `read`/`write` of the locations stay plain
/// accesses). TMA needs sizes that are constant multiples of 16 here.
fn copy_buffer_bytes(prog: &Program, mapping: Mapping, kernel_only: bool) -> Result<u32, Refusal> {
    let mut max = 0;
    for t in prog.threads.iter().filter(|t| t.kind == ThreadKind::Device) {
        for i in &prog.codes[t.code.index()].instrs {
            if let InstrKind::CopyIssue { site, bytes, hold, .. } = &i.kind {
                let kind = &prog.copy_sites[*site as usize].kind;
                if matches!(kind, bc_graph::CopySite::Arrive { .. }) {
                    continue;
                }
                // A kernel-only file's copy of a location list (`cp.async
                // [a, b], [c]`): it copies the litmus locations, separate
                // variables, which no one copy instruction covers. (A
                // harness copies between its scratch buffers whatever the
                // locations.)
                let agent = &prog.codes[prog.copy_code(*site, 0).index()].instrs;
                let count = |read: bool| {
                    (agent.iter())
                        .filter(|a| match a.kind {
                            InstrKind::Read { .. } => read,
                            InstrKind::Write { .. } => !read,
                            _ => false,
                        })
                        .count()
                };
                if kernel_only && (count(true) != 1 || count(false) != 1) {
                    return refuse(format!(
                        "`{}`: a kernel-only file cannot copy a location list (each litmus location is a variable of its own)",
                        i.text
                    ));
                }
                if hold.is_some() || *kind == bc_graph::CopySite::Plain {
                    // 16 bytes whatever the litmus size (one cp.async),
                    // a slice per harness thread of the block: racecheck
                    // sees these copies' writes, and the litmus threads'
                    // copies are of distinct data.
                    max = max.max(16 * (1024 / mapping.width()));
                    continue;
                }
                let CExpr::Int(n) = bytes else {
                    return refuse(format!("`{}`: the harness needs a constant byte count", i.text));
                };
                if *n <= 0 || n % 16 != 0 || *n > 16384 {
                    return refuse(format!(
                        "`{}`: a bulk copy's size must be a positive multiple of 16 up to 16384 bytes here",
                        i.text
                    ));
                }
                max = max.max(*n as u32);
            }
        }
    }
    Ok(max)
}

/// The bytes of each `var` declaration in a kernel-only file
/// ([`Plan::var_bytes`]): at least 8, and at least every constant size of
/// a bulk copy (`cp.async.bulk`, a TMA store) that copies into or out of
/// it. A `cp.async` of a location (`bc_cp_async_loc`) copies 8 bytes.
fn var_bytes(prog: &Program, nvars: usize) -> Vec<u32> {
    let mut bytes = vec![8u32; nvars];
    for t in prog.threads.iter().filter(|t| t.kind == ThreadKind::Device) {
        for i in &prog.codes[t.code.index()].instrs {
            let InstrKind::CopyIssue {
                site, bytes: n, hold, ..
            } = &i.kind
            else {
                continue;
            };
            let kind = &prog.copy_sites[*site as usize].kind;
            if hold.is_some() || matches!(kind, bc_graph::CopySite::Arrive { .. } | bc_graph::CopySite::Plain) {
                continue;
            }
            let CExpr::Int(n) = n else { continue };
            let n = u32::try_from(*n).unwrap_or(0);
            let (dst, src, _) = copy_site(prog, *site);
            for d in [dst, src] {
                if let Some(b) = bytes.get_mut(d as usize) {
                    *b = (*b).max(n);
                }
            }
        }
    }
    bytes
}

impl<'a> Plan<'a> {
    /// The plan of a harness, or with `kernel_only` of a kernel-only file.
    pub fn new(lit: &'a Litmus, prog: &'a Program, kernel_only: bool) -> Result<Plan<'a>, Refusal> {
        if !prog.model.name.starts_with("cuda") {
            return refuse(format!("model `{}` is not a CUDA model", prog.model.name));
        }
        let mut stmt_names = HashMap::new();
        for t in &lit.threads {
            names_of(&t.body, &mut stmt_names);
        }
        // Lanes where masks name lanes, and where `.aligned` barriers meet
        // blocks of more than one warp: there a litmus thread is a lane
        // (docs/semantics.md, "A warp arrives as one"), and a warp per
        // litmus thread would not fit the block.
        // A kernel-only file takes lanes wherever `.aligned` barriers are
        // written, whatever the block's size: it keeps their `.aligned`
        // form, whose rule is about the lanes of one warp. (The harness
        // keeps a warp per litmus thread in blocks of one warp, where
        // counts in litmus threads become multiples of 32 CUDA threads.)
        // And lanes where a thread count is a multiple of 32 (or not a
        // constant), `.aligned` or not: the model counts a warp's arrival
        // there as 32 whatever its lanes (`System::warp_counted` in
        // bc-explore), which only a litmus thread per lane runs as written
        // (a warp per litmus thread would count a lane that exited short).
        let whole_warp_count = prog.codes.iter().flat_map(|c| &c.instrs).any(|i| {
            matches!(&i.kind, InstrKind::Barrier { op: bc_graph::BarrierOp::Arrive(a), .. }
                if a.count_match && a.set_count.as_ref().is_some_and(|k| !matches!(k, CExpr::Int(n) if n % 32 != 0)))
        });
        let aligned_lanes = whole_warp_count
            || (stmt_names.values().any(|n| n.ends_with(".aligned"))
                && (kernel_only || prog.threads.iter().any(|t| t.ntid > 32)));
        let mapping = if aligned_lanes
            || stmt_names.values().any(|n| {
                n == "__syncwarp" || n == "tile.sync" || bc_syntax::kinds::WARP_INTRINSICS.contains(&n.as_str())
            }) {
            Mapping::Lane
        } else {
            Mapping::Warp
        };
        let copy_bytes = copy_buffer_bytes(prog, mapping, kernel_only)?;
        let var_bytes = var_bytes(prog, lit.vars.len());
        for (d, b) in lit.barriers.iter().enumerate() {
            let scope = scope_of(&b.attrs, Scope::Block);
            if scope != Scope::Block {
                return refuse(format!(
                    "barrier `{}` has scope {}: only block-scope barriers have an exact CUDA object (a shared-memory mbarrier)",
                    lit.barriers[d].name.name,
                    scope.name()
                ));
            }
        }
        let var_scope: Vec<Scope> = lit.vars.iter().map(|v| scope_of(&v.attrs, Scope::Device)).collect();
        let predefined = predefined_ids(prog);
        tokens(prog)?;
        plain_and_atomic(prog)?;
        let grids = grids(lit, prog, mapping)?;
        let (mapped, streams) = host_side(prog)?;
        let max_regs = prog.codes.iter().map(|c| c.regs.len()).max().unwrap_or(0).max(1);
        let grid_sync = stmt_names.values().any(|n| n == "grid.sync");
        Ok(Plan {
            lit,
            prog,
            mapping,
            grids,
            var_scope,
            mapped,
            streams,
            stmt_names,
            predefined,
            max_regs,
            grid_sync,
            copy_bytes,
            var_bytes,
            kernel_only,
        })
    }

    /// The CUDA threads of one block of `g`.
    pub fn block_dim(&self, g: &Grid) -> u32 {
        g.ntid * self.mapping.width()
    }
}

/// The `scope=` attribute of a declaration, or `default`.
fn scope_of(attrs: &[bc_syntax::Attr], default: Scope) -> Scope {
    attrs
        .iter()
        .find(|a| a.key.name == "scope")
        .and_then(|a| a.name_value.as_ref())
        .and_then(|v| Scope::parse(&v.name))
        .unwrap_or(default)
}

/// Records each instruction statement's name by its span start.
fn names_of(body: &[Stmt], out: &mut HashMap<u32, String>) {
    for s in body {
        match &s.kind {
            StmtKind::Instr { name, .. } => {
                out.insert(s.span.start, name.name.clone());
            }
            StmtKind::If { then, els, .. } => {
                names_of(then, out);
                names_of(els, out);
            }
            StmtKind::Repeat { body, .. } | StmtKind::While { body, .. } => names_of(body, out),
            _ => {}
        }
    }
}

/// The predefined barrier id of each barrier declaration index: the
/// lowering names a predefined declaration `NAME(ID)` after the model's
/// barrier.
fn predefined_ids(prog: &Program) -> Vec<Option<i64>> {
    let ndecl = prog.threads.iter().map(|t| t.barriers.len()).max().unwrap_or(0);
    // The copy agents' start barriers are declared barriers too, numbered
    // after the predefined ones (`bc_graph::copies`): the user's own
    // declarations are the ones before those.
    let starts = if prog.copy_sites.is_empty() {
        0
    } else {
        ndecl.saturating_sub(prog.copy_first_decl as usize)
    };
    let user = prog.declared_barriers.len().saturating_sub(starts);
    (0..ndecl)
        .map(|d| {
            if d < user || (starts > 0 && d >= prog.copy_first_decl as usize) {
                return None;
            }
            let inst = prog.threads.iter().find_map(|t| t.barriers.get(d).copied().flatten())?;
            let b = &prog.barriers[inst.index()];
            if b.syncwarp.is_some() {
                return None;
            }
            // The barrier a run-time id out of range names.
            if b.props.out_of_range {
                return Some(bc_graph::OUT_OF_RANGE_BARRIER_ID);
            }
            prog.model
                .barriers
                .iter()
                .find(|pb| format!("{}({})", pb.name, pb.id) == b.decl_name)
                .map(|pb| pb.id)
        })
        .collect()
}

/// Registers per code that hold phase tokens. A GPU token is an opaque
/// state word and the model's a phase number, so a token may only flow from
/// the arrive that made it to a wait: a token read as a number, or a wait
/// on a register that also holds numbers, has no exact CUDA form.
fn tokens(prog: &Program) -> Result<(), Refusal> {
    for code in &prog.codes {
        let mut tok = vec![false; code.regs.len()];
        let mut num = vec![false; code.regs.len()];
        let mut waited = BTreeSet::new();
        for i in &code.instrs {
            match &i.kind {
                InstrKind::Barrier { result, op, .. } => {
                    match result {
                        Some(BarrierResult::Token(r)) => tok[r.index()] = true,
                        Some(BarrierResult::Reduce(r))
                        | Some(BarrierResult::IsFirst(r))
                        | Some(BarrierResult::Poll(r)) => num[r.index()] = true,
                        None => {}
                    }
                    if let bc_graph::BarrierOp::Wait(w) = op {
                        if let Some(t) = w.token {
                            waited.insert(t.index());
                        }
                    }
                }
                InstrKind::Assign { dest, .. } => num[dest.index()] = true,
                InstrKind::Load { dest: Some(r), .. }
                | InstrKind::Rmw { dest: Some(r), .. }
                | InstrKind::Cas { dest: Some(r), .. }
                | InstrKind::StreamQuery { dest: Some(r), .. } => num[r.index()] = true,
                _ => {}
            }
        }
        for i in &code.instrs {
            let mut read = Vec::new();
            for e in i.kind.exprs() {
                regs_read(e, &mut read);
            }
            if let Some(r) = read.into_iter().find(|r| tok[*r]) {
                let name = &code.regs[r];
                if !name.contains('@') {
                    return refuse(format!(
                        "token register `{name}` is used as a number (`{}`): a GPU token is an opaque state word, not the model's phase number",
                        i.text
                    ));
                }
            }
        }
        for r in waited {
            if num[r] || !tok[r] {
                return refuse(format!(
                    "a wait uses register `{}` as a token, but it holds a number: the model's phase numbers have no GPU token",
                    code.regs[r]
                ));
            }
        }
    }
    Ok(())
}

/// A location both plain-accessed and atomically accessed: the model gives
/// a plain write no value, a GPU's plain write stores one, so the final
/// value would not compare.
fn plain_and_atomic(prog: &Program) -> Result<(), Refusal> {
    let mut plain = vec![false; prog.locs.len()];
    let mut atomic = vec![false; prog.locs.len()];
    for t in &prog.threads {
        let inst = |d: &u32| t.locs.get(*d as usize).copied().flatten();
        for i in &prog.codes[t.code.index()].instrs {
            match &i.kind {
                InstrKind::Read { decl } | InstrKind::Write { decl } => {
                    if let Some(l) = inst(decl) {
                        plain[l.index()] = true;
                    }
                }
                InstrKind::Store { decl, .. }
                | InstrKind::Load { decl, .. }
                | InstrKind::Rmw { decl, .. }
                | InstrKind::Cas { decl, .. } => {
                    if let Some(l) = inst(decl) {
                        atomic[l.index()] = true;
                    }
                }
                InstrKind::Await(c) => await_locs(c, &mut |d| {
                    if let Some(l) = inst(&d) {
                        atomic[l.index()] = true;
                    }
                }),
                _ => {}
            }
        }
    }
    if let Some(l) = (0..prog.locs.len()).find(|&l| plain[l] && atomic[l]) {
        return refuse(format!(
            "location `{}` has both plain and atomic accesses: a plain write stores a value on a GPU but none in the model",
            prog.locs[l].name
        ));
    }
    Ok(())
}

fn await_locs(e: &CExpr, f: &mut dyn FnMut(u32)) {
    match e {
        CExpr::Loc(d) => f(*d),
        CExpr::Unary(_, x) => await_locs(x, f),
        CExpr::Binary(_, a, b) => {
            await_locs(a, f);
            await_locs(b, f)
        }
        _ => {}
    }
}

fn regs_read(e: &CExpr, out: &mut Vec<usize>) {
    match e {
        CExpr::Reg(r) => out.push(r.index()),
        CExpr::Unary(_, x) => regs_read(x, out),
        CExpr::Binary(_, a, b) => {
            regs_read(a, out);
            regs_read(b, out)
        }
        _ => {}
    }
}

/// The launches: the explicit threads form one grid, each kernel its own
/// (litmus spec, "File structure"; the lowering places them so).
fn grids(lit: &Litmus, prog: &Program, mapping: Mapping) -> Result<Vec<Grid>, Refusal> {
    // Key: None for the explicit threads, Some(declaration) for a kernel.
    let mut by_key: BTreeMap<Option<usize>, Vec<ThreadId>> = BTreeMap::new();
    for (i, t) in prog.threads.iter().enumerate() {
        // A copy agent is the hardware's own: no harness thread runs it.
        if matches!(t.kind, ThreadKind::Host | ThreadKind::Copy) {
            continue;
        }
        let d = t.code.index();
        let key = (lit.threads[d].form == ThreadForm::Kernel).then_some(d);
        by_key.entry(key).or_default().push(ThreadId(i as u32));
    }
    let max_ntid = 1024 / mapping.width();
    let mut out = Vec::new();
    for (key, mut threads) in by_key {
        threads.sort_by_key(|t| {
            let th = prog.thread(*t);
            (th.block, th.tid)
        });
        let th = |t: &ThreadId| prog.thread(*t);
        let blocks = threads.iter().map(|t| th(t).block).max().unwrap_or(0) + 1;
        let mut per_block = vec![0u32; blocks as usize];
        for t in &threads {
            per_block[th(t).block as usize] += 1;
        }
        let ntid = per_block[0];
        if per_block.iter().any(|&n| n != ntid) {
            return refuse(
                "the explicit threads' blocks have different sizes (or a block has none): a CUDA launch has one block size",
            );
        }
        if ntid > max_ntid {
            return refuse(format!(
                "{ntid} threads per block: the {} mapping fits at most {max_ntid} in a CUDA block of 1024 threads",
                mapping.name()
            ));
        }
        for t in &threads {
            let x = th(t);
            if mapping == Mapping::Lane && (x.warp != x.tid / WARP || x.lane != x.tid % WARP) {
                return refuse(format!(
                    "thread {} has warp={} but is thread {} of its block: in the lane mapping a thread's warp is its index / 32",
                    x.name, x.warp, x.tid
                ));
            }
        }
        let clusters = threads.iter().map(|t| th(t).cluster).max().unwrap_or(0) + 1;
        let cluster = if blocks % clusters == 0 { blocks / clusters } else { 0 };
        if cluster == 0 || threads.iter().any(|t| th(t).cluster != th(t).block / cluster) {
            return refuse("clusters are not equal runs of consecutive blocks: no CUDA cluster shape places them");
        }
        if cluster > 8 {
            return refuse(format!("cluster of {cluster} blocks: the portable CUDA maximum is 8"));
        }
        let mut codes: Vec<usize> = threads.iter().map(|t| th(t).code.index()).collect();
        codes.sort();
        codes.dedup();
        let kernel = threads.first().and_then(|t| th(t).kernel);
        let func = match (key, kernel) {
            (None, _) => "bc_threads".to_string(),
            (Some(_), Some(k)) => format!("bc_kernel_{}", c_ident(&prog.kernels[k as usize].name)),
            (Some(d), None) => format!("bc_kernel{d}"),
        };
        out.push(Grid {
            func,
            kernel,
            cooperative: threads.first().is_some_and(|t| th(t).cooperative),
            threads,
            blocks,
            ntid,
            cluster,
            codes,
        });
    }
    Ok(out)
}

/// Host threads: which locations they touch, which streams they name, and
/// whether each named kernel is launched once at most.
fn host_side(prog: &Program) -> Result<(bool, Vec<i64>), Refusal> {
    let mut mapped = false;
    let mut streams = BTreeSet::new();
    let mut launches = vec![0u32; prog.kernels.len()];
    for t in prog.threads.iter().filter(|t| t.kind == ThreadKind::Host) {
        let code = &prog.codes[t.code.index()];
        for (pc, i) in code.instrs.iter().enumerate() {
            match &i.kind {
                InstrKind::Store { .. }
                | InstrKind::Load { .. }
                | InstrKind::Rmw { .. }
                | InstrKind::Cas { .. }
                | InstrKind::Await(_)
                | InstrKind::Read { .. }
                | InstrKind::Write { .. } => mapped = true,
                InstrKind::Launch { stream, .. } | InstrKind::StreamQuery { stream, .. } => {
                    let CExpr::Int(s) = stream else {
                        return refuse(format!("`{}`: the stream must be a constant", i.text));
                    };
                    streams.insert(*s);
                    if let InstrKind::Launch { kernel, .. } = &i.kind {
                        launches[*kernel as usize] += 1;
                        let in_loop = code.instrs.iter().enumerate().any(|(j, x)| match &x.kind {
                            InstrKind::Jump(to) => (*to as usize) <= pc && pc < j,
                            InstrKind::Branch { then, els, .. } => {
                                ((*then as usize) <= pc || (*els as usize) <= pc) && pc < j
                            }
                            _ => false,
                        });
                        if in_loop {
                            return refuse(format!("`{}` may run more than once (in a loop)", i.text));
                        }
                    }
                }
                InstrKind::Barrier { .. } => {
                    return refuse(format!("`{}`: a barrier operation in a host thread", i.text));
                }
                _ => {}
            }
        }
    }
    if let Some(k) = launches.iter().position(|&n| n > 1) {
        return refuse(format!(
            "kernel `{}` is launched by more than one `launch`: its threads are one set in the model",
            prog.kernels[k].name
        ));
    }
    if mapped {
        // Device read-modify-writes on host memory need
        // hostNativeAtomicSupported, which PCIe hosts lack.
        for t in prog.threads.iter().filter(|t| t.kind == ThreadKind::Device) {
            let code = &prog.codes[t.code.index()];
            if let Some(i) = code
                .instrs
                .iter()
                .find(|i| matches!(i.kind, InstrKind::Rmw { .. } | InstrKind::Cas { .. }))
            {
                return refuse(format!(
                    "`{}`: a device read-modify-write on a location a host thread touches (host memory; needs hostNativeAtomicSupported)",
                    i.text
                ));
            }
        }
    }
    Ok((mapped, streams.into_iter().collect()))
}

/// A C identifier from a litmus name.
pub fn c_ident(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}
