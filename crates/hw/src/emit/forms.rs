//! The instruction-form table: each lowered instruction (and each model
//! instruction statement, by its name) becomes CUDA C++. Registers are
//! `reg[i]` (64-bit, wrapping arithmetic through `bc_*` helpers); tokens
//! are real mbarrier state words in `tok[i]`; control flow is labels and
//! `goto`s, as in the lowered code.

use super::plan::{Mapping, Plan};
use super::{refuse, Refusal};
use bc_graph::{
    AsyncGroupOp, BarrierOp, BarrierResult, BarrierSel, Builtin, CExpr, Code, FenceScope, Instr, InstrKind, Program,
    Rmw,
};
use bc_models::Scope;
use bc_syntax::kinds::WARP_INTRINSICS;
use bc_syntax::lexer::Op;
use std::collections::BTreeSet;
use std::fmt::Write;

/// Where a body runs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Device,
    Host,
}

/// Emits the body of code `c` as C statements; labels are `{p}L{pc}`, the
/// end of the body jumps to `{p}end`.
pub fn body(plan: &Plan, c: usize, side: Side) -> Result<String, Refusal> {
    let code = &plan.prog.codes[c];
    let p = format!("c{c}_");
    // The instructions that implement an async-group statement
    // (`InstrKind::AsyncGroup`) are not emitted: the hardware runs the
    // statement itself.
    let mut hidden = vec![false; code.instrs.len()];
    for (pc, i) in code.instrs.iter().enumerate() {
        if let InstrKind::AsyncGroup { len, .. } = i.kind {
            for h in &mut hidden[pc + 1..=pc + len as usize] {
                *h = true;
            }
        }
    }
    let mut targets = BTreeSet::new();
    for (i, _) in code.instrs.iter().zip(&hidden).filter(|(_, h)| !**h) {
        match &i.kind {
            InstrKind::Jump(t) => {
                targets.insert(*t);
            }
            InstrKind::Branch { then, els, .. } => {
                targets.insert(*then);
                targets.insert(*els);
            }
            _ => {}
        }
    }
    let e = Emit { plan, side };
    let mut out = String::new();
    let end = code.instrs.len() as u32;
    let label = |t: u32| {
        if t >= end {
            format!("{p}end")
        } else {
            format!("{p}L{t}")
        }
    };
    for (pc, i) in code.instrs.iter().enumerate() {
        if hidden[pc] {
            continue;
        }
        let pc = pc as u32;
        if targets.contains(&pc) {
            let _ = writeln!(out, "{}: ;", label(pc));
        }
        let _ = writeln!(out, "  // {}", i.text.replace('\n', " "));
        let s = match &i.kind {
            InstrKind::Assign { dest, value } => format!("reg[{}] = {};", dest.index(), e.expr(value)),
            InstrKind::Branch { cond, then, els } => {
                format!(
                    "if ({}) {{ goto {}; }} else {{ goto {}; }}",
                    e.expr(cond),
                    label(*then),
                    label(*els)
                )
            }
            InstrKind::Jump(t) => format!("goto {};", label(*t)),
            InstrKind::Exit => format!("goto {p}end;"),
            // Every lane fences its own accesses.
            InstrKind::Fence(scope) => match scope {
                FenceScope::Cta => "__threadfence_block();".to_string(),
                FenceScope::Cluster => "asm volatile(\"fence.acq_rel.cluster;\" ::: \"memory\");".to_string(),
                FenceScope::Gpu => "__threadfence();".to_string(),
                FenceScope::Sys => "__threadfence_system();".to_string(),
                FenceScope::ProxyAsync => "asm volatile(\"fence.proxy.async;\" ::: \"memory\");".to_string(),
                FenceScope::MbarrierInit => {
                    "asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");".to_string()
                }
            },
            InstrKind::CoalescedSync => "cooperative_groups::coalesced_threads().sync();".to_string(),
            // PTX `cp.async.commit_group`/`wait_group`/`wait_all`; the
            // thread-scope pipeline through libcu++ itself.
            InstrKind::AsyncGroup { op, .. } => {
                let stmt = match op {
                    AsyncGroupOp::Commit => "asm volatile(\"cp.async.commit_group;\" ::: \"memory\");".to_string(),
                    AsyncGroupOp::Wait(n) => format!("asm volatile(\"cp.async.wait_group {n};\" ::: \"memory\");"),
                    AsyncGroupOp::WaitAll => "asm volatile(\"cp.async.wait_all;\" ::: \"memory\");".to_string(),
                    AsyncGroupOp::PipelineAcquire => "bc_pipe.producer_acquire();".to_string(),
                    AsyncGroupOp::PipelineCommit => "bc_pipe.producer_commit();".to_string(),
                    AsyncGroupOp::PipelineWait => "bc_pipe.consumer_wait();".to_string(),
                    AsyncGroupOp::PipelineRelease => "bc_pipe.consumer_release();".to_string(),
                    AsyncGroupOp::BulkCommit => {
                        "asm volatile(\"cp.async.bulk.commit_group;\" ::: \"memory\");".to_string()
                    }
                    AsyncGroupOp::BulkWait(n) => {
                        format!("asm volatile(\"cp.async.bulk.wait_group {n};\" ::: \"memory\");")
                    }
                    AsyncGroupOp::BulkWaitRead(n) => {
                        format!("asm volatile(\"cp.async.bulk.wait_group.read {n};\" ::: \"memory\");")
                    }
                };
                e.lead(&stmt, None)
            }
            InstrKind::Barrier { .. } => {
                let prev = pc.checked_sub(1).and_then(|q| code.instrs.get(q as usize));
                let next = code.instrs.get(pc as usize + 1);
                e.barrier(i, prev, next)?
            }
            _ => e.memory_or_host(i)?,
        };
        if !s.is_empty() {
            for line in s.lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
    }
    let exits = code.instrs.iter().any(|i| matches!(i.kind, InstrKind::Exit));
    if exits || targets.contains(&end) {
        let _ = writeln!(out, "{p}end: ;");
    }
    Ok(out)
}

struct Emit<'a> {
    plan: &'a Plan<'a>,
    side: Side,
}

/// A 64-bit C literal (the smallest i64 has no literal of its own).
pub fn lit(v: i64) -> String {
    if v == i64::MIN {
        "(-9223372036854775807LL - 1)".to_string()
    } else {
        format!("{v}LL")
    }
}

impl Emit<'_> {
    fn warp(&self) -> bool {
        self.side == Side::Device && self.plan.mapping == Mapping::Warp
    }

    /// A C expression with the model's arithmetic (docs/semantics.md,
    /// "Arithmetic": wrapping; division by zero gives 0).
    fn expr(&self, e: &CExpr) -> String {
        match e {
            CExpr::Int(v) => lit(*v),
            CExpr::Reg(r) => format!("reg[{}]", r.index()),
            CExpr::Builtin(b) => match b {
                Builtin::Tid => "b_tid",
                Builtin::Bid => "b_bid",
                Builtin::Warp => "b_warp",
                Builtin::Lane => "b_lane",
                Builtin::Ntid => "b_ntid",
            }
            .to_string(),
            CExpr::Loc(d) => format!("{}({})", self.atomic("ld", *d), self.ptr(*d)),
            // Assertion-only forms never reach a body.
            CExpr::ThreadReg(..) | CExpr::LocInst(_) => "0LL".to_string(),
            CExpr::Unary(Op::Not, x) => format!("(long long)({} == 0)", self.expr(x)),
            CExpr::Unary(_, x) => format!("bc_neg({})", self.expr(x)),
            CExpr::Binary(op, a, b) => {
                let (a, b) = (self.expr(a), self.expr(b));
                match op {
                    Op::Add => format!("bc_add({a}, {b})"),
                    Op::Sub => format!("bc_sub({a}, {b})"),
                    Op::Mul => format!("bc_mul({a}, {b})"),
                    Op::Div => format!("bc_div({a}, {b})"),
                    Op::Rem => format!("bc_rem({a}, {b})"),
                    Op::Eq => format!("(long long)({a} == {b})"),
                    Op::Ne => format!("(long long)({a} != {b})"),
                    Op::Lt => format!("(long long)({a} < {b})"),
                    Op::Le => format!("(long long)({a} <= {b})"),
                    Op::Gt => format!("(long long)({a} > {b})"),
                    Op::Ge => format!("(long long)({a} >= {b})"),
                    Op::And => format!("(long long)({a} != 0 && {b} != 0)"),
                    Op::Or => format!("(long long)({a} != 0 || {b} != 0)"),
                    Op::Not => format!("(long long)({b} == 0)"),
                    Op::BitAnd => format!("({a} & {b})"),
                    Op::BitOr => format!("({a} | {b})"),
                    Op::Xor => format!("({a} ^ {b})"),
                    Op::Shl => format!("bc_shl({a}, {b})"),
                    Op::Shr => format!("bc_shr({a}, {b})"),
                }
            }
        }
    }

    /// A kernel-only file's copy site `site` (docs/ptx.md, "The round
    /// trip"): its destination and source declarations and whether each is
    /// block scope (shared memory; else global memory). `None` in a harness
    /// (which copies between its scratch buffers) or without a scope.
    fn site_locs(&self, site: u32) -> Option<(u32, u32, bool, bool)> {
        let (d, s, _) = crate::emit::plan::copy_site(self.plan.prog, site);
        let shared = |x: u32| (self.plan.var_scope.get(x as usize)).map(|&scope| scope == bc_models::Scope::Block);
        Some((d, s, shared(d)?, shared(s)?)).filter(|_| self.plan.kernel_only)
    }

    /// A kernel-only file copies the litmus locations of copy site `site`
    /// where PTX can: a block-scope destination (shared memory) and a
    /// source that is not (global memory). Their declarations, or `None`
    /// (the scratch buffers).
    fn copy_locs(&self, site: u32) -> Option<(u32, u32)> {
        self.site_locs(site)
            .filter(|&(_, _, dsh, ssh)| dsh && !ssh)
            .map(|(d, s, ..)| (d, s))
    }

    /// A kernel-only file's bulk copy into shared memory: its locations,
    /// and whether the source is shared too.
    fn bulk_locs(&self, site: u32) -> Option<(u32, u32, bool)> {
        self.site_locs(site)
            .filter(|&(_, _, dsh, _)| dsh)
            .map(|(d, s, _, ssh)| (d, s, ssh))
    }

    /// A kernel-only file's TMA store: its global destination and shared
    /// source locations, as [`Self::copy_locs`] gives a copy's.
    fn store_locs(&self, site: u32) -> Option<(u32, u32)> {
        self.site_locs(site)
            .filter(|&(_, _, dsh, ssh)| ssh && !dsh)
            .map(|(d, s, ..)| (d, s))
    }

    /// The address of location declaration `d` for this thread.
    fn ptr(&self, d: u32) -> String {
        match self.side {
            Side::Device => format!("lp[{d}]"),
            Side::Host => format!("bc_host_ptr(T, {d})"),
        }
    }

    /// The helper for atomic operation `op` on declaration `d`, with the
    /// scope of the memory it lives in.
    fn atomic(&self, op: &str, d: u32) -> String {
        let scope = if self.side == Side::Host || self.plan.mapped {
            "cuda::thread_scope_system"
        } else if self.plan.var_scope[d as usize] == Scope::Block {
            "cuda::thread_scope_block"
        } else {
            "cuda::thread_scope_device"
        };
        format!("bc_{op}<{scope}>")
    }

    /// `stmt` run by the thread's lane 0 (warp mapping) with the warp
    /// reconverged after it and `dest` broadcast; as is otherwise.
    ///
    /// A kernel-only file leaves out the `__syncwarp` after a statement
    /// without a result: the harness needs it so that no lane runs ahead
    /// on the GPU, but in the model a lane's access is before its own
    /// arrival anyway, and the warp meets again at its next barrier, which
    /// is `.aligned` there (below). Each lane's arrival at a `__syncwarp`
    /// would be one more step of 32 to interleave.
    fn lead(&self, stmt: &str, dest: Option<usize>) -> String {
        if !self.warp() {
            return stmt.to_string();
        }
        match dest {
            None if self.plan.kernel_only => format!("if (lane == 0) {{ {stmt} }}"),
            Some(r) => format!("if (lane == 0) {{ {stmt} }}\nreg[{r}] = __shfl_sync(0xffffffffu, reg[{r}], 0);"),
            None => format!("if (lane == 0) {{ {stmt} }}\n__syncwarp();"),
        }
    }

    fn memory_or_host(&self, i: &Instr) -> Result<String, Refusal> {
        let dest_of = |d: &Option<bc_graph::RegId>| d.map(|r| r.index());
        let assign = |d: Option<usize>, v: String| match d {
            Some(r) => format!("reg[{r}] = {v};"),
            None => format!("(void){v};"),
        };
        Ok(match &i.kind {
            InstrKind::Store { decl, value } => self.lead(
                &format!(
                    "{}({}, {});",
                    self.atomic("st", *decl),
                    self.ptr(*decl),
                    self.expr(value)
                ),
                None,
            ),
            InstrKind::Load { decl, dest } => {
                let d = dest_of(dest);
                self.lead(
                    &assign(d, format!("{}({})", self.atomic("ld", *decl), self.ptr(*decl))),
                    d,
                )
            }
            InstrKind::Rmw { rmw, decl, value, dest } => {
                let op = match rmw {
                    Rmw::Exch => "xchg",
                    Rmw::FetchAdd => "fadd",
                };
                let d = dest_of(dest);
                let v = format!("{}({}, {})", self.atomic(op, *decl), self.ptr(*decl), self.expr(value));
                self.lead(&assign(d, v), d)
            }
            InstrKind::Cas {
                decl,
                expected,
                new,
                dest,
            } => {
                let d = dest_of(dest);
                let v = format!(
                    "{}({}, {}, {})",
                    self.atomic("cas", *decl),
                    self.ptr(*decl),
                    self.expr(expected),
                    self.expr(new)
                );
                self.lead(&assign(d, v), d)
            }
            InstrKind::Await(cond) => self.lead(&format!("while (!({})) {{ }}", self.expr(cond)), None),
            InstrKind::Read { decl } => self.lead(&format!("bc_plain_read({});", self.ptr(*decl)), None),
            InstrKind::Write { decl } => self.lead(&format!("bc_plain_write({}, T + 1);", self.ptr(*decl)), None),
            InstrKind::Launch { kernel, stream } => {
                self.host_only(i)?;
                format!("bc_launch_{}({});", kernel, self.stream(stream))
            }
            InstrKind::DeviceSync => {
                self.host_only(i)?;
                "bc_device_sync();".to_string()
            }
            InstrKind::StreamQuery { stream, dest } => {
                self.host_only(i)?;
                assign(dest_of(dest), format!("bc_stream_query({})", self.stream(stream)))
            }
            // The data goes between the scratch buffers (`Plan::copy_bytes`).
            // `cp.async` of 16 bytes into the harness thread's slice of the
            // shared scratch buffer, as for `memcpy_async`.
            InstrKind::CopyIssue { site, .. }
                if self.plan.prog.copy_sites[*site as usize].kind == bc_graph::CopySite::Plain =>
            {
                let dst = format!("bc_tma_dst + 16u * (threadIdx.x / {}u)", self.plan.mapping.width());
                let call = if let Some((d, s)) = self.copy_locs(*site) {
                    format!("bc_cp_async_loc({}, {});", self.ptr(d), self.ptr(s))
                } else if i.text.starts_with("pipeline.") {
                    format!("cuda::memcpy_async({dst}, bc_tma_src, cuda::aligned_size_t<16>(16), bc_pipe);")
                } else {
                    format!("bc_cp_async({dst}, bc_tma_src);")
                };
                self.lead(&call, None)
            }
            InstrKind::CopyIssue { site, .. } => {
                if let bc_graph::CopySite::Arrive { noinc, .. } = self.plan.prog.copy_sites[*site as usize].kind {
                    let (_, _, bar) = crate::emit::plan::copy_site(self.plan.prog, *site);
                    let n = if noinc { ".noinc" } else { "" };
                    let call = format!(
                        "asm volatile(\"cp.async.mbarrier.arrive{n}.shared::cta.b64 [%0];\" :: \"r\"(bc_smem(&bc_bar_{bar})) : \"memory\");"
                    );
                    return Ok(self.lead(&call, None));
                }
                let InstrKind::CopyIssue { site, bytes, hold, .. } = &i.kind else {
                    unreachable!()
                };
                if self.plan.prog.copy_sites[*site as usize].kind == bc_graph::CopySite::BulkGroup {
                    // A TMA store: the shared scratch buffer to the global
                    // one, completed through the thread's bulk async-groups;
                    // in a kernel-only file the litmus locations themselves,
                    // with no proxy fence but the test's own.
                    let call = match self.store_locs(*site) {
                        Some((d, s)) => format!(
                            "asm volatile(\"cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\" :: \"l\"({}), \"r\"(bc_smem({})), \"r\"((unsigned)({})) : \"memory\");",
                            self.ptr(d),
                            self.ptr(s),
                            self.expr(bytes)
                        ),
                        None if self.plan.kernel_only => {
                            return refuse(format!(
                                "`{}`: a bulk copy without an mbarrier is a TMA store, from shared to global memory, in PTX",
                                i.text
                            ))
                        }
                        None => format!("bc_cp_async_bulk_store(bc_tma_src, bc_tma_dst, {});", self.expr(bytes)),
                    };
                    return Ok(self.lead(&call, None));
                }
                let (_, _, bar) = crate::emit::plan::copy_site(self.plan.prog, *site);
                if let (None, Some((d, s, src_shared))) = (hold, self.bulk_locs(*site)) {
                    // A kernel-only file's bulk copy: the litmus locations
                    // themselves, with no proxy fence but the test's own;
                    // from global memory, or within the block's shared
                    // memory (`.shared::cluster.shared::cta`, the issuing
                    // block's own address).
                    let (space, src) = if src_shared {
                        ("shared::cta", format!("\"r\"(bc_smem({}))", self.ptr(s)))
                    } else {
                        ("global", format!("\"l\"({})", self.ptr(s)))
                    };
                    let call = format!(
                        "asm volatile(\"cp.async.bulk.shared::cluster.{space}.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\" :: \"r\"(bc_smem({})), {src}, \"r\"((unsigned)({})), \"r\"(bc_smem(&bc_bar_{bar})) : \"memory\");",
                        self.ptr(d),
                        self.expr(bytes)
                    );
                    return Ok(self.lead(&call, None));
                }
                if hold.is_none() && self.plan.kernel_only {
                    return refuse(format!(
                        "`{}`: a bulk copy that completes on an mbarrier writes shared memory in PTX",
                        i.text
                    ));
                }
                let locs = self.copy_locs(*site).filter(|_| hold.is_some());
                let call = if let Some((d, s)) = locs {
                    // As for a plain `cp.async` in a kernel-only file: the
                    // litmus locations themselves.
                    format!(
                        "bc_cp_async_loc({}, {}); asm volatile(\"cp.async.mbarrier.arrive.shared::cta.b64 [%0];\" :: \"r\"(bc_smem(&bc_bar_{bar})) : \"memory\");",
                        self.ptr(d),
                        self.ptr(s)
                    )
                } else if hold.is_some() {
                    // libcu++'s non-bulk path: cp.async, then an arrive
                    // that raises the pending count and arrives when the
                    // thread's copies complete.
                    format!(
                        "bc_cp_async_arrive(bc_tma_dst + 16u * (threadIdx.x / {}u), bc_tma_src, &bc_bar_{bar});",
                        self.plan.mapping.width()
                    )
                } else {
                    format!(
                        "bc_cp_async_bulk(bc_tma_dst, bc_tma_src, {}, &bc_bar_{bar});",
                        self.expr(bytes)
                    )
                };
                self.lead(&call, None)
            }
            _ => unreachable!("control flow and barriers are emitted by the caller"),
        })
    }

    fn host_only(&self, i: &Instr) -> Result<(), Refusal> {
        if self.side == Side::Device {
            return refuse(format!("`{}`: a host operation in device code", i.text));
        }
        Ok(())
    }

    /// The index of a (constant, checked by the plan) litmus stream.
    fn stream(&self, e: &CExpr) -> usize {
        let CExpr::Int(s) = e else { return 0 };
        self.plan.streams.iter().position(|x| x == s).unwrap_or(0)
    }

    /// A barrier instruction: the statement's form decides the CUDA code
    /// (docs/hardware.md, "Mapping", the table). A statement lowered to
    /// an arrive and a wait is emitted at its arrive.
    fn barrier<'a>(&self, i: &'a Instr, prev: Option<&'a Instr>, next: Option<&'a Instr>) -> Result<String, Refusal> {
        if self.side == Side::Host {
            return refuse(format!("`{}`: a barrier operation in a host thread", i.text));
        }
        let InstrKind::Barrier { op, sel, result } = &i.kind else {
            unreachable!()
        };
        let name = self
            .plan
            .stmt_names
            .get(&i.span.start)
            .map(String::as_str)
            .unwrap_or("");
        let written_aligned = name.ends_with(".aligned");
        // The other spellings of one form (cuda models: the PTX and
        // __nvvm_* aliases) are emitted as that form.
        let name = match name {
            "barrier.sync"
            | "barrier.sync.aligned"
            | "barrier.cta.sync"
            | "__nvvm_bar_sync_all"
            | "__nvvm_barrier_sync" => "bar.sync",
            "barrier.arrive" | "barrier.cta.arrive" | "barrier.cta.arrive.aligned" => "bar.arrive",
            "__nvvm_bar0" | "block.sync" => "__syncthreads",
            // A tile's sync is `__syncwarp` over the tile's lanes, the
            // mask the lowering computed.
            "tile.sync" => "__syncwarp",
            "__nvvm_bar0_popc" => "__syncthreads_count",
            "__nvvm_bar0_and" => "__syncthreads_and",
            "__nvvm_bar0_or" => "__syncthreads_or",
            // PTX's `bar.red` is the `.aligned` form already.
            "barrier.red.popc.aligned" => "bar.red.popc",
            "barrier.red.and.aligned" => "bar.red.and",
            "barrier.red.or.aligned" => "bar.red.or",
            other => other,
        };
        let same = |o: Option<&'a Instr>| o.filter(|o| o.span == i.span && matches!(o.kind, InstrKind::Barrier { .. }));
        let pair = [
            "__syncthreads",
            "__syncthreads_count",
            "__syncthreads_and",
            "__syncthreads_or",
        ]
        .contains(&name)
            || ["__syncwarp", "bar.sync", "grid.sync", "cluster.sync", "arrive_wait"].contains(&name)
            || ["bar.red.popc", "bar.red.and", "bar.red.or"].contains(&name)
            || WARP_INTRINSICS.contains(&name);
        if pair && matches!(op, BarrierOp::Wait(_)) && same(prev).is_some() {
            return Ok(String::new());
        }
        let BarrierSel::Decl(d) = *sel else {
            return refuse(format!("`{}`: a joined-barrier selector has no CUDA form", i.text));
        };
        let bar = format!("&bc_bar_{d}");
        let token_dest = match result {
            Some(BarrierResult::Token(r)) => Some(r.index()),
            _ => None,
        };
        let arrive = match op {
            BarrierOp::Arrive(a) => Some(a),
            _ => None,
        };
        let warp = self.warp();
        Ok(match name {
            "__syncthreads" => "__syncthreads();".to_string(),
            "__syncthreads_count"
            | "__syncthreads_and"
            | "__syncthreads_or"
            | "bar.red.popc"
            | "bar.red.and"
            | "bar.red.or" => {
                let pred = arrive
                    .and_then(|a| a.pred.as_ref())
                    .map_or("0".to_string(), |p| self.expr(p));
                let dest = match same(next).map(|n| &n.kind) {
                    Some(InstrKind::Barrier {
                        result: Some(BarrierResult::Reduce(r)),
                        ..
                    }) => Some(r.index()),
                    _ => None,
                };
                let call = if name.starts_with("bar.red") {
                    let id = self.plan.predefined.get(d as usize).copied().flatten();
                    let Some(id) = id.filter(|id| (0..16).contains(id)) else {
                        return refuse(format!("`{}`: not a named barrier 0..15", i.text));
                    };
                    format!("bc_{}({id}, {pred})", name.replace('.', "_"))
                } else {
                    format!("{name}({pred} != 0)")
                };
                let value = match (name, warp) {
                    // Every lane of a warp passes the predicate: the count
                    // is 32 per litmus thread.
                    ("__syncthreads_count" | "bar.red.popc", true) => format!("(long long)({call} / 32)"),
                    ("__syncthreads_count" | "bar.red.popc", false) => format!("(long long)({call})"),
                    _ => format!("(long long)({call} != 0)"),
                };
                match dest {
                    Some(r) => format!("reg[{r}] = {value};"),
                    None => format!("(void){call};"),
                }
            }
            "bar.sync" | "bar.arrive" => {
                let id = self.plan.predefined.get(d as usize).copied().flatten();
                // A barrier id computed out of range (`ub(invalid-barrier)`):
                // the device may do anything; the harness traps.
                if id == Some(bc_graph::OUT_OF_RANGE_BARRIER_ID) {
                    return Ok("asm volatile(\"trap;\");".to_string());
                }
                let Some(id) = id.filter(|id| (0..16).contains(id)) else {
                    return refuse(format!("`{}`: not a named barrier 0..15", i.text));
                };
                let count = arrive.and_then(|a| a.set_count.as_ref());
                // `bar.sync`/`bar.arrive` are PTX's `.aligned` forms, which
                // every thread of the CTA must reach from the same path;
                // the litmus statements have no such rule (only
                // `__syncthreads`, barrier 0 without a count, has the
                // language's uniformity rule), and the harness reaches
                // them from per-thread branches. So the program is the
                // test, they are emitted as the non-aligned `barrier.sync`
                // / `barrier.arrive` (same barrier, same counts; sm_70+).
                // A kernel-only file in the warp mapping, where every
                // lane of a warp takes its litmus thread's path, uses the
                // `.aligned` forms: the warp arrives as one there
                // (docs/semantics.md, "A warp arrives as one"), which is
                // the litmus reading of a thread that stands for a warp.
                // In the lane mapping, a kernel-only file keeps the
                // statement's own form: `.aligned` where the litmus
                // statement says it (the PTX front end reads it back as
                // that statement).
                let aligned = self.plan.kernel_only && (self.warp() || written_aligned);
                let ptx = match (name, id, count) {
                    ("bar.sync", 0, None) => "bar.sync",
                    ("bar.sync", ..) if aligned => "bar.sync",
                    ("bar.arrive", ..) if aligned => "bar.arrive",
                    ("bar.sync", ..) => "barrier.sync",
                    _ => "barrier.arrive",
                };
                match count {
                    None => format!("asm volatile(\"{ptx} {id};\" ::: \"memory\");"),
                    Some(c) => {
                        let threads = self.thread_count(i, c)?;
                        format!("asm volatile(\"{ptx} {id}, %0;\" :: \"r\"({threads}) : \"memory\");")
                    }
                }
            }
            // A warp intrinsic: its arrive carries the mask and the value,
            // its wait the result and a shuffle's lane and width.
            // Emitted as the CUDA intrinsic of the same name (lane mapping).
            n if WARP_INTRINSICS.contains(&n) => {
                let mask = arrive
                    .and_then(|a| a.mask.as_ref())
                    .map_or("0xffffffffu".to_string(), |m| format!("(unsigned)({})", self.expr(m)));
                let value = arrive
                    .and_then(|a| a.value.as_ref())
                    .map_or("0".to_string(), |(v, _)| self.expr(v));
                let Some(InstrKind::Barrier {
                    op: BarrierOp::Wait(spec),
                    result,
                    ..
                }) = same(next).map(|n| &n.kind)
                else {
                    return refuse(format!("`{}`: a warp intrinsic without its wait", i.text));
                };
                let lane = spec.lane.as_ref().map_or("0".to_string(), |e| self.expr(e));
                let width = spec.width.as_ref().map_or("32".to_string(), |e| self.expr(e));
                let call = if n == "elect.sync" {
                    // PTX `elect.sync` (sm_90): the leader's lane id.
                    format!("bc_elect({mask})")
                } else if n.starts_with("__shfl") {
                    format!("{n}({mask}, (long long)({value}), (int)({lane}), (int)({width}))")
                } else if n == "__match_all_sync" {
                    // Its third operand receives whether all matched.
                    format!("{n}({mask}, (long long)({value}), &bc_match_all)")
                } else if n.starts_with("__match") {
                    format!("{n}({mask}, (long long)({value}))")
                } else if n == "__reduce_min_sync" || n == "__reduce_max_sync" {
                    format!("{n}({mask}, (int)({value}))")
                } else if n.starts_with("__reduce") {
                    format!("{n}({mask}, (unsigned)({value}))")
                } else {
                    format!("{n}({mask}, (int)(({value}) != 0))")
                };
                let stmt = match result {
                    Some(BarrierResult::Reduce(r)) => format!("reg[{}] = (long long)({call});", r.index()),
                    _ => format!("(void){call};"),
                };
                if n == "__match_all_sync" {
                    format!("{{ int bc_match_all; {stmt} }}")
                } else {
                    stmt
                }
            }
            "__syncwarp" => {
                let mask = arrive
                    .and_then(|a| a.mask.as_ref())
                    .map_or("0xffffffffu".to_string(), |m| format!("(unsigned)({})", self.expr(m)));
                format!("__syncwarp({mask});")
            }
            "grid.sync" => "cooperative_groups::this_grid().sync();".to_string(),
            "cluster.sync" => {
                "asm volatile(\"barrier.cluster.arrive;\\n\\tbarrier.cluster.wait;\" ::: \"memory\");".to_string()
            }
            // The hardware keeps the cluster phase per thread: the wait
            // waits for the phase of the thread's last arrive, which is the
            // phase of the token the model checks (the plan refused
            // integer tokens).
            "cluster.barrier_arrive" => "asm volatile(\"barrier.cluster.arrive;\" ::: \"memory\");".to_string(),
            "cluster.barrier_wait" => "asm volatile(\"barrier.cluster.wait;\" ::: \"memory\");".to_string(),
            // The PTX spellings, as written (all lanes of the warp run
            // them, which the .aligned forms require).
            ptx if ptx.starts_with("barrier.cluster.") => format!("asm volatile(\"{ptx};\" ::: \"memory\");"),
            // Cooperative groups' split barriers, by every lane (they are
            // collectives of the whole group). The block's token is an
            // empty struct (CUDA 13's thread_block::arrival_token), so the
            // wait takes a fresh one; the grid's is an unsigned int, kept
            // in the token register.
            "block.barrier_arrive" => "(void)cooperative_groups::this_thread_block().barrier_arrive();".to_string(),
            "block.barrier_wait" => {
                "cooperative_groups::this_thread_block().barrier_wait(cooperative_groups::thread_block::arrival_token());"
                    .to_string()
            }
            "grid.barrier_arrive" => match token_dest {
                Some(t) => format!("tok[{t}] = cooperative_groups::this_grid().barrier_arrive();"),
                None => "(void)cooperative_groups::this_grid().barrier_arrive();".to_string(),
            },
            "grid.barrier_wait" => {
                let BarrierOp::Wait(w) = op else { unreachable!() };
                let Some(t) = w.token else {
                    return refuse(format!("`{}`: a grid barrier_wait without a token", i.text));
                };
                format!("cooperative_groups::this_grid().barrier_wait((unsigned)tok[{}]);", t.index())
            }
            "mbarrier.init" | "init" => {
                let BarrierOp::Init(k) = op else { unreachable!() };
                self.lead(&format!("bc_mbar_init({bar}, {});", self.expr(k)), None)
            }
            "mbarrier.arrive" | "arrive" | "arrive_n" | "barrier_arrive_tx" => {
                if arrive.is_some_and(|a| a.set_count.is_some()) {
                    return refuse(format!(
                        "`{}`: an arrive that sets the expected count has no CUDA form (cuda::barrier::arrive(n) makes n arrivals)",
                        i.text
                    ));
                }
                let n = arrive.and_then(|a| a.arrivals.as_ref()).map(|n| self.expr(n));
                let tx = arrive.and_then(|a| a.tx.as_ref()).map(|n| self.expr(n));
                // n arrivals (`arrive_n`, `mbarrier.arrive B, n`), with a
                // transaction count (`barrier_arrive_tx`).
                let call = match (n, tx) {
                    (Some(n), Some(tx)) => format!("bc_mbar_arrive_tx_n({bar}, {n}, {tx})"),
                    (Some(n), None) => format!("bc_mbar_arrive_n({bar}, {n})"),
                    _ => format!("bc_mbar_arrive({bar})"),
                };
                match token_dest {
                    Some(t) => self.lead(&format!("tok[{t}] = {call};"), None),
                    None => self.lead(&format!("(void){call};"), None),
                }
            }
            "wait" => {
                let BarrierOp::Wait(w) = op else { unreachable!() };
                let Some(t) = w.token else {
                    return refuse(format!(
                        "`{}`: a wait without a token has no cuda::barrier form",
                        i.text
                    ));
                };
                self.lead(&format!("bc_mbar_wait({bar}, tok[{}]);", t.index()), None)
            }
            "arrive_wait" => self.lead(&format!("bc_mbar_wait({bar}, bc_mbar_arrive({bar}));"), None),
            "mbarrier.arrive_drop" | "arrive_drop" => self.lead(&format!("bc_mbar_arrive_drop({bar});"), None),
            "mbarrier.arrive.expect_tx" => {
                let tx = arrive
                    .and_then(|a| a.tx.as_ref())
                    .map_or("0LL".to_string(), |n| self.expr(n));
                match token_dest {
                    Some(t) => self.lead(&format!("tok[{t}] = bc_mbar_arrive_expect_tx({bar}, {tx});"), None),
                    None => self.lead(&format!("(void)bc_mbar_arrive_expect_tx({bar}, {tx});"), None),
                }
            }
            "mbarrier.expect_tx" => {
                let BarrierOp::ExpectTx(n) = op else { unreachable!() };
                self.lead(&format!("bc_mbar_expect_tx({bar}, {});", self.expr(n)), None)
            }
            "mbarrier.complete_tx" => {
                let BarrierOp::CompleteTx(n) = op else { unreachable!() };
                self.lead(&format!("bc_mbar_complete_tx({bar}, {});", self.expr(n)), None)
            }
            "mbarrier.try_wait.parity"
            | "mbarrier.test_wait.parity"
            | "mbarrier.try_wait"
            | "mbarrier.test_wait"
            | "try_wait"
                if matches!(op, BarrierOp::Wait(w) if w.poll) =>
            {
                let BarrierOp::Wait(w) = op else { unreachable!() };
                let call = match (&w.parity, w.token) {
                    (Some(p), _) => format!("bc_mbar_test_wait_parity({bar}, {})", self.expr(p)),
                    (None, Some(tk)) => format!("bc_mbar_test_wait({bar}, tok[{}])", tk.index()),
                    (None, None) => return refuse(format!("`{}`: a poll without parity or token", i.text)),
                };
                match result {
                    Some(BarrierResult::Poll(r)) => {
                        self.lead(&format!("reg[{}] = {call};", r.index()), Some(r.index()))
                    }
                    _ => self.lead(&format!("(void){call};"), None),
                }
            }
            "mbarrier.try_wait" | "mbarrier.test_wait" => {
                let BarrierOp::Wait(w) = op else { unreachable!() };
                let Some(tk) = w.token else {
                    return refuse(format!("`{}`: a token wait without a token", i.text));
                };
                self.lead(&format!("bc_mbar_wait({bar}, tok[{}]);", tk.index()), None)
            }
            "mbarrier.test_wait.parity" | "mbarrier.try_wait.parity" => {
                let BarrierOp::Wait(w) = op else { unreachable!() };
                let p = w.parity.as_ref().map_or("0LL".to_string(), |p| self.expr(p));
                self.lead(&format!("bc_mbar_wait_parity({bar}, {p});"), None)
            }
            "mbarrier.inval" => self.lead(&format!("bc_mbar_inval({bar});"), None),
            other => {
                return refuse(format!(
                    "`{}`: no CUDA form for `{other}` ({} operation)",
                    i.text,
                    op.name()
                ))
            }
        })
    }

    /// The CUDA thread count of a named barrier's litmus thread count: 32
    /// per litmus thread in the warp mapping; in the lane mapping the count
    /// must be a constant multiple of 32 (PTX requires whole warps).
    fn thread_count(&self, i: &Instr, c: &CExpr) -> Result<String, Refusal> {
        if let CExpr::Int(n) = c {
            if *n <= 0 || *n > 1024 {
                return refuse(format!("`{}`: thread count {n} is outside 1..1024", i.text));
            }
        }
        match self.plan.mapping {
            Mapping::Warp => Ok(format!("(unsigned)({}) * 32u", self.expr(c))),
            Mapping::Lane => match c {
                CExpr::Int(n) if n % 32 == 0 => Ok(format!("{n}u")),
                _ => refuse(format!(
                    "`{}`: in the lane mapping a named barrier's count must be a constant multiple of 32",
                    i.text
                )),
            },
        }
    }
}

/// Whether `code` issues a copy that writes the grid's scratch
/// destination `bc_tma_dst` (every copy issue but
/// `cp.async.mbarrier.arrive`, which copies nothing).
pub fn copies_into_scratch(prog: &Program, code: &Code) -> bool {
    code.instrs.iter().any(|i| match &i.kind {
        InstrKind::CopyIssue { site, .. } => {
            !matches!(prog.copy_sites[*site as usize].kind, bc_graph::CopySite::Arrive { .. })
        }
        _ => false,
    })
}

/// Whether code `c` names location or barrier declarations (for the
/// kernel's shared declarations).
pub fn uses_barrier(prog: &Program, code: &Code, d: u32) -> bool {
    code.instrs.iter().any(|i| match &i.kind {
        InstrKind::Barrier {
            sel: BarrierSel::Decl(x),
            ..
        } => *x == d,
        InstrKind::CopyIssue { site, .. } => crate::emit::plan::copy_site(prog, *site).2 == d,
        _ => false,
    })
}
