//! Asynchronous copies as threads of their own: the agents that perform
//! `cp.async.bulk`, `memcpy_async` and `cp.async` copies and the
//! asynchronous arrive of `cp.async.mbarrier.arrive`, added after
//! lowering ([`add_copy_agents`]), and the expansion of the async-group
//! statements (`cp.async.commit_group`, `cp.async.wait_group N`,
//! `cp.async.wait_all`, thread-scope `cuda::pipeline`) into ordinary
//! branches and parity waits on the agents' start barriers
//! ([`expand_async_groups`]), so that the explorer and the rule checker
//! see nothing but barrier operations.

use crate::ids::*;
use crate::program::*;
use bc_syntax::{Op, Span};

/// One copy statement as the lowering found it.
pub(crate) struct SiteSpec {
    /// Destination and source locations (none for an arrive site): a copy
    /// of several locations (`cp.async [a, b], [c, d]`, or a PTX copy
    /// whose bytes span several modelled pieces) reads every source and
    /// writes every destination; a source list may be empty (a copy that
    /// reads nothing).
    pub dst: Vec<u32>,
    pub src: Vec<u32>,
    /// The declared barrier the copy or the arrive completes on.
    pub barrier: Option<u32>,
    pub kind: SiteKind,
    pub span: Span,
    pub text: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum SiteKind {
    /// `cp.async.bulk`; `memcpy_async` (`holds`: the copy completes the
    /// one transaction its issue added, not its bytes).
    Bulk { holds: bool },
    /// `cp.async` (and `pipeline.memcpy_async`).
    Plain,
    /// `cp.async.bulk DST, SRC, BYTES`: completion through the bulk
    /// async-groups.
    BulkGroup,
    /// `cp.async.mbarrier.arrive[.noinc] B`.
    Arrive { noinc: bool },
}

/// How many copies from one bulk site one thread may have in flight at
/// once (copies whose events do not all execute before the next issue). A
/// search that needs more stops, inconclusive (`copy-limit`).
pub const COPY_AGENTS: usize = 2;
/// The same for one `cp.async` site: a multistage pipeline keeps one copy
/// per stage in flight (four stages).
pub const PLAIN_COPY_AGENTS: usize = 4;
/// The same for one `cp.async.mbarrier.arrive` site (one per stage).
pub const ARRIVE_AGENTS: usize = 4;

/// Adds the agents of asynchronous copies ([`crate::CopyPool`]): for each
/// thread and each copy site it can reach, a pool of threads of kind
/// [`ThreadKind::Copy`] ([`COPY_AGENTS`], [`PLAIN_COPY_AGENTS`] or
/// [`ARRIVE_AGENTS`]), in the issuer's block, cluster and warp and naming
/// its instances, each with a start barrier of its own (count 1, set at
/// launch) on which the issue arrives. An agent's code, after its wait
/// for the issue's phase:
///
/// - bulk: read the source, write the destination, complete `bytes`
///   (register 1) transactions on the barrier, flip the parity (register 0);
/// - plain (`cp.async`): read the source, write the destination, then
///   arrive on its own start barrier: that second phase is the copy's
///   completion, which an async-group wait of the issuer waits for (parity
///   1), and the next issue opens the next pair of phases (so the agent
///   always waits for parity 0);
/// - arrive: wait for the completion of each plain agent of the issuer
///   that its flags name (set by the issue: every copy issued before it),
///   then complete the transaction the issue held on the barrier, or with
///   `.noinc` arrive on it.
///
/// Appended after every user thread, barrier and code, so the user's
/// numbering is unchanged. Then expands the async-group statements
/// ([`expand_async_groups`]).
pub(crate) fn add_copy_agents(mut p: Program, specs: &[SiteSpec]) -> Program {
    if specs.is_empty() {
        return expand_async_groups(p, specs);
    }
    // Each site's code, and the plain sites each code issues.
    let mut site_code = vec![0usize; specs.len()];
    let mut plain_of_code: Vec<Vec<u32>> = vec![Vec::new(); p.codes.len()];
    for (c, code) in p.codes.iter().enumerate() {
        for ins in &code.instrs {
            if let InstrKind::CopyIssue { site, .. } = ins.kind {
                site_code[site as usize] = c;
                if specs[site as usize].kind == SiteKind::Plain {
                    plain_of_code[c].push(site);
                }
            }
        }
    }
    let mut first = 0;
    p.copy_sites = specs
        .iter()
        .zip(&site_code)
        .map(|(sp, &c)| {
            let (kind, agents) = match sp.kind {
                SiteKind::Bulk { .. } => (CopySite::Bulk, COPY_AGENTS),
                SiteKind::BulkGroup => (CopySite::BulkGroup, COPY_AGENTS),
                SiteKind::Plain => (CopySite::Plain, PLAIN_COPY_AGENTS),
                SiteKind::Arrive { noinc } => (
                    CopySite::Arrive {
                        tracks: plain_of_code[c].clone(),
                        noinc,
                    },
                    ARRIVE_AGENTS,
                ),
            };
            let info = CopySiteInfo {
                kind,
                agents: agents as u32,
                first,
                async_proxy: matches!(sp.kind, SiteKind::Bulk { holds: false } | SiteKind::BulkGroup),
                written: None,
            };
            first += agents as u32;
            info
        })
        .collect();
    // The `written` declarations of bulk-group agents, after every start
    // declaration.
    let mut written = first;
    for info in &mut p.copy_sites {
        if info.kind == CopySite::BulkGroup {
            info.written = Some(written);
            written += info.agents;
        }
    }
    let first_code = p.codes.len() as u32;
    let first_decl = p.threads.first().map_or(0, |t| t.barriers.len()) as u32;
    p.copy_first_code = first_code;
    p.copy_first_decl = first_decl;
    for (i, site) in specs.iter().enumerate() {
        for k in 0..p.copy_site_agents(i as u32) {
            let code = agent_code(&p, specs, i as u32, k);
            p.codes.push(code);
            p.declared_barriers.push(crate::program::DeclaredBarrier {
                name: format!("start of copy agent {k} of `{}`", site.text),
                launch_count: Some(1),
                out_of_range: false,
            });
        }
    }
    for (i, site) in specs.iter().enumerate() {
        if site.kind != SiteKind::BulkGroup {
            continue;
        }
        for k in 0..p.copy_site_agents(i as u32) {
            p.declared_barriers.push(crate::program::DeclaredBarrier {
                name: format!("written barrier of copy agent {k} of `{}`", site.text),
                launch_count: Some(1),
                out_of_range: false,
            });
        }
    }
    // Every thread names the start (and written) declarations; an issuer
    // holds its agents' instances, an agent its own (an arrive agent also
    // those of the copies it tracks).
    let total = written as usize;
    for t in &mut p.threads {
        t.barriers.resize(first_decl as usize + total, None);
    }
    let users = p.threads.len();
    let mut pools = Vec::new();
    for issuer in 0..users {
        let code = p.threads[issuer].code;
        let reach = crate::classes::reachable_pcs(&p, ThreadId(issuer as u32));
        let mut issued: Vec<u32> = Vec::new();
        for (pc, ins) in p.codes[code.index()].instrs.iter().enumerate() {
            if let (InstrKind::CopyIssue { site, .. }, true) = (&ins.kind, reach[pc]) {
                if !issued.contains(site) {
                    issued.push(*site);
                }
            }
        }
        issued.sort_unstable();
        for &site in &issued {
            for k in 0..p.copy_site_agents(site) {
                let name = format!("{}.copy{}.{k}", p.threads[issuer].name, site);
                p.barriers.push(BarrierInstance {
                    name: format!("{name}.start"),
                    decl_name: format!("{name}.start"),
                    launch_count: Some(1),
                    decl_span: specs[site as usize].span,
                    props: BarrierProps::default(),
                    syncwarp: None,
                    exit_drops: false,
                });
                let decl = p.copy_start_decl(site, k) as usize;
                p.threads[issuer].barriers[decl] = Some(BarrierId(p.barriers.len() as u32 - 1));
                if let Some(decl) = p.copy_written_decl(site, k) {
                    p.barriers.push(BarrierInstance {
                        name: format!("{name}.written"),
                        decl_name: format!("{name}.written"),
                        launch_count: Some(1),
                        decl_span: specs[site as usize].span,
                        props: BarrierProps {
                            copy_written: true,
                            ..BarrierProps::default()
                        },
                        syncwarp: None,
                        exit_drops: false,
                    });
                    p.threads[issuer].barriers[decl as usize] = Some(BarrierId(p.barriers.len() as u32 - 1));
                }
            }
        }
        for site in issued {
            let mut agents = Vec::new();
            let keep: Vec<u32> = match &p.copy_sites[site as usize].kind {
                CopySite::Arrive { tracks, .. } => tracks.clone(),
                _ => Vec::new(),
            };
            for k in 0..p.copy_site_agents(site) {
                let name = format!("{}.copy{}.{k}", p.threads[issuer].name, site);
                let decl = p.copy_start_decl(site, k) as usize;
                let start = p.threads[issuer].barriers[decl].expect("set above");
                let mut info = p.threads[issuer].clone();
                info.name = name;
                info.kind = ThreadKind::Copy;
                info.kernel = None;
                info.code = p.copy_code(site, k);
                let kept: Vec<usize> = keep
                    .iter()
                    .flat_map(|&s| (0..p.copy_site_agents(s)).map(move |j| (s, j)))
                    .map(|(s, j)| p.copy_start_decl(s, j) as usize)
                    .chain(p.copy_written_decl(site, k).map(|d| d as usize))
                    .collect();
                for (d, slot) in info.barriers.iter_mut().enumerate().skip(first_decl as usize) {
                    if d != decl && !kept.contains(&d) {
                        *slot = None;
                    }
                }
                p.threads.push(info);
                agents.push((ThreadId(p.threads.len() as u32 - 1), start));
            }
            pools.push(crate::program::CopyPool {
                issuer: ThreadId(issuer as u32),
                site,
                agents,
            });
        }
    }
    p.copy_pools = pools;
    expand_async_groups(p, specs)
}

/// The code of agent `k` of copy site `site` ([`add_copy_agents`]).
fn agent_code(p: &Program, specs: &[SiteSpec], site: u32, k: usize) -> Code {
    let spec = &specs[site as usize];
    let instr = |kind: InstrKind, what: &str| Instr {
        kind,
        span: spec.span,
        text: format!("{} ({what})", spec.text),
    };
    let start = BarrierSel::Decl(p.copy_start_decl(site, k));
    let wait = |parity: CExpr, sel: BarrierSel| InstrKind::Barrier {
        op: BarrierOp::Wait(WaitSpec {
            parity: Some(parity),
            ..WaitSpec::default()
        }),
        sel,
        result: None,
    };
    let flip = InstrKind::Assign {
        dest: COPY_PARITY_REG,
        value: CExpr::Binary(Op::Xor, Box::new(CExpr::Reg(COPY_PARITY_REG)), Box::new(CExpr::Int(1))),
    };
    let mut regs = vec!["parity@copy".to_string(), "bytes@copy".to_string()];
    // A copying agent marks its completion as not yet observed.
    let pending = InstrKind::Assign {
        dest: COPY_PENDING_REG,
        value: CExpr::Int(1),
    };
    if !matches!(spec.kind, SiteKind::Arrive { .. }) {
        regs.push("pending@copy".to_string());
    }
    // One plain access per location the copy reads or writes: they share
    // one place in the agent's program order (the explorer takes them as
    // one step with the start, `run_copy_start`), so each races exactly
    // when the copy does.
    let reads: Vec<Instr> = (spec.src.iter())
        .map(|&decl| instr(InstrKind::Read { decl }, "reads the source"))
        .collect();
    let writes: Vec<Instr> = (spec.dst.iter())
        .map(|&decl| instr(InstrKind::Write { decl }, "writes the destination"))
        .collect();
    let instrs = match spec.kind {
        SiteKind::Bulk { holds } => [
            vec![instr(wait(CExpr::Reg(COPY_PARITY_REG), start), "the copy starts")],
            reads,
            writes,
            vec![
                instr(
                    InstrKind::Barrier {
                        op: BarrierOp::CompleteTx(if holds {
                            CExpr::Int(1)
                        } else {
                            CExpr::Reg(COPY_BYTES_REG)
                        }),
                        sel: BarrierSel::Decl(spec.barrier.expect("a bulk copy names its barrier")),
                        result: None,
                    },
                    "completes its transactions",
                ),
                instr(pending, "done"),
                instr(flip, "done"),
            ],
        ]
        .concat(),
        // A bulk-group copy: its reads end with an arrive on its start
        // barrier (the odd phase after the issue's: what `.read` waits and
        // copy-not-waited observe), and its write lies between two
        // arrives on its `written` barrier, so a full wait (parity 1 on
        // the start barrier, then on `written`) finds the write's phase
        // open once the reads are done.
        SiteKind::BulkGroup => {
            let written = BarrierSel::Decl(
                p.copy_written_decl(site, k)
                    .expect("a bulk-group agent's written barrier"),
            );
            let arrive = |sel: BarrierSel| InstrKind::Barrier {
                op: BarrierOp::Arrive(ArriveSpec::default()),
                sel,
                result: None,
            };
            [
                vec![
                    instr(wait(CExpr::Int(0), start), "the copy starts"),
                    instr(arrive(written), "the copy starts"),
                ],
                reads,
                vec![
                    instr(arrive(start), "has read the source"),
                    instr(pending, "has read the source"),
                ],
                writes,
                vec![instr(arrive(written), "completes")],
            ]
            .concat()
        }
        SiteKind::Plain => [
            vec![instr(wait(CExpr::Int(0), start), "the copy starts")],
            reads,
            writes,
            vec![
                instr(
                    InstrKind::Barrier {
                        op: BarrierOp::Arrive(ArriveSpec::default()),
                        sel: start,
                        result: None,
                    },
                    "completes",
                ),
                instr(pending, "done"),
            ],
        ]
        .concat(),
        SiteKind::Arrive { noinc } => {
            let CopySite::Arrive { tracks, .. } = &p.copy_sites[site as usize].kind else {
                unreachable!("an arrive site's info is an arrive");
            };
            let mut v = vec![instr(wait(CExpr::Reg(COPY_PARITY_REG), start), "the arrive is issued")];
            for &s in tracks {
                for j in 0..p.copy_site_agents(s) {
                    let flag = RegId(regs.len() as u32);
                    regs.push(format!("tracks@copy{s}.{j}"));
                    let here = v.len() as u32;
                    let what = format!("waits for `{}`", specs[s as usize].text);
                    v.push(instr(
                        InstrKind::Branch {
                            cond: CExpr::Reg(flag),
                            then: here + 1,
                            els: here + 3,
                        },
                        &what,
                    ));
                    v.push(instr(
                        wait(CExpr::Int(1), BarrierSel::Decl(p.copy_start_decl(s, j))),
                        &what,
                    ));
                    v.push(instr(
                        InstrKind::Assign {
                            dest: flag,
                            value: CExpr::Int(0),
                        },
                        &what,
                    ));
                }
            }
            let sel = BarrierSel::Decl(spec.barrier.expect("an arrive names its barrier"));
            let (op, what) = if noinc {
                (BarrierOp::Arrive(ArriveSpec::default()), "arrives")
            } else {
                (BarrierOp::CompleteTx(CExpr::Int(1)), "releases the phase it held")
            };
            v.push(instr(InstrKind::Barrier { op, sel, result: None }, what));
            v.push(instr(flip, "done"));
            v
        }
    };
    Code {
        instrs,
        regs,
        counted_loops: Vec::new(),
    }
}

/// The largest `N` thread-scope `cuda::pipeline` passes to
/// `cp.async.wait_group` (libcudacxx caps `consumer_wait`'s count there).
pub const PIPELINE_MAX_STAGES: i64 = 8;

/// Expands each async-group statement of each user code
/// ([`InstrKind::AsyncGroup`]) in place: the marker stays (a local no-op
/// naming the statement) and is followed by its implementation, with the
/// code's jumps renumbered. A code that issues `cp.async` copies gets one
/// hidden register per agent of each of its plain sites, the agent's
/// *age* ("PTX ISA, cp.async.commit_group, cp.async.wait_group": groups
/// are per thread, a commit closes every copy issued since the last one
/// into a new group, possibly empty, and `wait_group N` returns once every
/// group but the `N` newest has completed): 0 for no pending copy, 1 for
/// a copy not committed yet, `1 + m` for a copy whose group has `m - 1`
/// newer ones, saturating at a cap past the largest `N` the code waits
/// with. A commit ages every pending copy; a wait with `N` waits, for each
/// agent of age `N + 2` or more, for the completion phase of its start
/// barrier (parity 1) and clears its age. Thread-scope `cuda::pipeline`
/// keeps head and tail in two more hidden registers.
fn expand_async_groups(mut p: Program, specs: &[SiteSpec]) -> Program {
    let users = if p.copy_sites.is_empty() {
        p.codes.len()
    } else {
        p.copy_first_code as usize
    };
    for c in 0..users {
        let has_group = p.codes[c]
            .instrs
            .iter()
            .any(|i| matches!(i.kind, InstrKind::AsyncGroup { .. }));
        if !has_group {
            continue;
        }
        // The ages: per plain (and, apart, per bulk-group) site the code
        // issues, one per agent.
        let mut ages: Vec<(u32, usize, RegId)> = Vec::new();
        let mut bulk_ages: Vec<(u32, usize, RegId)> = Vec::new();
        let mut bases: Vec<(u32, RegId)> = Vec::new();
        let sites: Vec<u32> = p.codes[c]
            .instrs
            .iter()
            .filter_map(|i| match i.kind {
                InstrKind::CopyIssue { site, .. }
                    if matches!(p.copy_sites[site as usize].kind, CopySite::Plain | CopySite::BulkGroup) =>
                {
                    Some(site)
                }
                _ => None,
            })
            .collect();
        for &s in &sites {
            if bases.iter().any(|&(b, _)| b == s) {
                continue;
            }
            let base = RegId(p.codes[c].regs.len() as u32);
            bases.push((s, base));
            let bulk = p.copy_sites[s as usize].kind == CopySite::BulkGroup;
            for k in 0..p.copy_site_agents(s) {
                let r = RegId(p.codes[c].regs.len() as u32);
                p.codes[c].regs.push(format!("age@copy{s}.{k}"));
                if bulk {
                    bulk_ages.push((s, k, r));
                } else {
                    ages.push((s, k, r));
                }
            }
        }
        let pipeline = p.codes[c].instrs.iter().any(|i| {
            matches!(
                i.kind,
                InstrKind::AsyncGroup {
                    op: AsyncGroupOp::PipelineCommit | AsyncGroupOp::PipelineWait,
                    ..
                }
            )
        });
        let (head, tail) = if pipeline {
            let h = RegId(p.codes[c].regs.len() as u32);
            p.codes[c].regs.push("head@pipeline".into());
            p.codes[c].regs.push("tail@pipeline".into());
            (h, RegId(h.0 + 1))
        } else {
            (RegId(0), RegId(0))
        };
        let max_n = p.codes[c]
            .instrs
            .iter()
            .filter_map(|i| match i.kind {
                InstrKind::AsyncGroup {
                    op: AsyncGroupOp::Wait(n),
                    ..
                } => Some(i64::from(n)),
                InstrKind::AsyncGroup {
                    op: AsyncGroupOp::PipelineWait,
                    ..
                } => Some(PIPELINE_MAX_STAGES),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        let cap = max_n + 2;
        let bulk_cap = p.codes[c]
            .instrs
            .iter()
            .filter_map(|i| match i.kind {
                InstrKind::AsyncGroup {
                    op: AsyncGroupOp::BulkWait(n) | AsyncGroupOp::BulkWaitRead(n),
                    ..
                } => Some(i64::from(n)),
                _ => None,
            })
            .max()
            .unwrap_or(0)
            + 2;
        let old = std::mem::take(&mut p.codes[c].instrs);
        // The expansions, then the renumbering.
        let mut bodies: Vec<Vec<Instr>> = Vec::with_capacity(old.len());
        let mut new_pc = Vec::with_capacity(old.len() + 1);
        let mut at = 0u32;
        for ins in &old {
            new_pc.push(at);
            let body = match ins.kind {
                InstrKind::AsyncGroup { op, .. } => {
                    let x = Expand {
                        p: &p,
                        specs,
                        ins,
                        ages: &ages,
                        cap,
                        bulk_ages: &bulk_ages,
                        bulk_cap,
                        head,
                        tail,
                    };
                    x.body(op, at + 1)
                }
                _ => Vec::new(),
            };
            at += 1 + body.len() as u32;
            bodies.push(body);
        }
        new_pc.push(at);
        let len = old.len();
        let map = |pc: u32| new_pc[(pc as usize).min(len)];
        let mut instrs = Vec::with_capacity(at as usize);
        for (mut ins, body) in old.into_iter().zip(bodies) {
            match &mut ins.kind {
                InstrKind::Branch { then, els, .. } => {
                    *then = map(*then);
                    *els = map(*els);
                }
                InstrKind::Jump(to) => *to = map(*to),
                InstrKind::AsyncGroup { len, .. } => *len = body.len() as u32,
                InstrKind::CopyIssue { site, age, .. } => {
                    *age = bases.iter().find(|(s, _)| *s == *site).map(|&(_, r)| r);
                }
                _ => {}
            }
            instrs.push(ins);
            instrs.extend(body);
        }
        let code = &mut p.codes[c];
        code.counted_loops = code.counted_loops.iter().map(|&pc| map(pc)).collect();
        code.instrs = instrs;
    }
    p
}

/// The implementation of one async-group statement ([`expand_async_groups`]).
struct Expand<'a> {
    p: &'a Program,
    specs: &'a [SiteSpec],
    ins: &'a Instr,
    ages: &'a [(u32, usize, RegId)],
    cap: i64,
    /// The bulk-group agents' ages, their own group sequence.
    bulk_ages: &'a [(u32, usize, RegId)],
    bulk_cap: i64,
    head: RegId,
    tail: RegId,
}

fn bin(op: Op, a: CExpr, b: CExpr) -> CExpr {
    CExpr::Binary(op, Box::new(a), Box::new(b))
}

impl Expand<'_> {
    fn instr(&self, kind: InstrKind, what: String) -> Instr {
        Instr {
            kind,
            span: self.ins.span,
            text: if what.is_empty() {
                self.ins.text.clone()
            } else {
                format!("{} ({what})", self.ins.text)
            },
        }
    }

    /// The instructions of `op`, the first at pc `at`.
    fn body(&self, op: AsyncGroupOp, at: u32) -> Vec<Instr> {
        let mut v = Vec::new();
        match op {
            AsyncGroupOp::BulkCommit => self.age(&mut v, self.bulk_ages, self.bulk_cap),
            AsyncGroupOp::BulkWait(n) => self.bulk_wait(&mut v, at, n, false),
            AsyncGroupOp::BulkWaitRead(n) => self.bulk_wait(&mut v, at, n, true),
            AsyncGroupOp::Commit => self.commit(&mut v),
            AsyncGroupOp::Wait(n) => self.wait(&mut v, at, CExpr::Int(i64::from(n))),
            AsyncGroupOp::WaitAll => {
                self.commit(&mut v);
                self.wait(&mut v, at, CExpr::Int(0));
            }
            AsyncGroupOp::PipelineAcquire | AsyncGroupOp::PipelineRelease => {}
            AsyncGroupOp::PipelineCommit => {
                self.commit(&mut v);
                v.push(self.assign(self.head, bin(Op::Add, CExpr::Reg(self.head), CExpr::Int(1))));
            }
            AsyncGroupOp::PipelineWait => {
                // if head != tail { wait_group min(head - tail - 1, 8); tail += 1 }
                let guard = v.len();
                v.push(self.instr(
                    InstrKind::Branch {
                        cond: bin(Op::Ne, CExpr::Reg(self.head), CExpr::Reg(self.tail)),
                        then: at + 1,
                        els: u32::MAX,
                    },
                    String::new(),
                ));
                let d = bin(
                    Op::Sub,
                    bin(Op::Sub, CExpr::Reg(self.head), CExpr::Reg(self.tail)),
                    CExpr::Int(1),
                );
                let over = bin(Op::Gt, d.clone(), CExpr::Int(PIPELINE_MAX_STAGES));
                let n = bin(
                    Op::Sub,
                    d.clone(),
                    bin(Op::Mul, over, bin(Op::Sub, d, CExpr::Int(PIPELINE_MAX_STAGES))),
                );
                self.wait(&mut v, at, n);
                v.push(self.assign(self.tail, bin(Op::Add, CExpr::Reg(self.tail), CExpr::Int(1))));
                let end = at + v.len() as u32;
                if let InstrKind::Branch { els, .. } = &mut v[guard].kind {
                    *els = end;
                }
            }
        }
        v
    }

    fn assign(&self, dest: RegId, value: CExpr) -> Instr {
        self.instr(InstrKind::Assign { dest, value }, String::new())
    }

    /// Every pending copy gets one group older (saturating at the cap).
    fn commit(&self, v: &mut Vec<Instr>) {
        self.age(v, self.ages, self.cap);
    }

    /// Every pending copy of `ages` gets one group older (saturating at
    /// `cap`).
    fn age(&self, v: &mut Vec<Instr>, ages: &[(u32, usize, RegId)], cap: i64) {
        for &(_, _, r) in ages {
            let age = CExpr::Reg(r);
            let older = bin(
                Op::And,
                bin(Op::Gt, age.clone(), CExpr::Int(0)),
                bin(Op::Lt, age.clone(), CExpr::Int(cap)),
            );
            v.push(self.assign(r, bin(Op::Add, age, older)));
        }
    }

    /// `cp.async.bulk.wait_group[.read] n`: for every bulk-group copy older
    /// than the `n` newest groups, wait until it has read its source
    /// (parity 1 on its start barrier); without `.read` also until it has
    /// written its destination (parity 1 on its `written` barrier), and
    /// forget it. After a `.read` wait the copy stays pending for a later
    /// full wait.
    fn bulk_wait(&self, v: &mut Vec<Instr>, at: u32, n: u32, read: bool) {
        let waits = if read { 1 } else { 2 };
        for &(s, k, r) in self.bulk_ages {
            let here = at + v.len() as u32;
            let what = format!("copy {k} of `{}`", self.specs[s as usize].text);
            let skip = here + 1 + waits + u32::from(!read);
            v.push(self.instr(
                InstrKind::Branch {
                    cond: bin(Op::Ge, CExpr::Reg(r), CExpr::Int(i64::from(n) + 2)),
                    then: here + 1,
                    els: skip,
                },
                what.clone(),
            ));
            let parity_wait = |decl: u32| InstrKind::Barrier {
                op: BarrierOp::Wait(WaitSpec {
                    parity: Some(CExpr::Int(1)),
                    ..WaitSpec::default()
                }),
                sel: BarrierSel::Decl(decl),
                result: None,
            };
            v.push(self.instr(
                parity_wait(self.p.copy_start_decl(s, k)),
                format!("waits until {what} has read its source"),
            ));
            if !read {
                let written = self
                    .p
                    .copy_written_decl(s, k)
                    .expect("a bulk-group agent's written barrier");
                v.push(self.instr(parity_wait(written), format!("waits until {what} has written")));
                v.push(self.assign(r, CExpr::Int(0)));
            }
        }
    }

    /// Waits for the completion of every copy older than the `n` newest
    /// groups.
    fn wait(&self, v: &mut Vec<Instr>, at: u32, n: CExpr) {
        for &(s, k, r) in self.ages {
            let here = at + v.len() as u32;
            let what = format!("copy {k} of `{}`", self.specs[s as usize].text);
            v.push(self.instr(
                InstrKind::Branch {
                    cond: bin(Op::Ge, CExpr::Reg(r), bin(Op::Add, n.clone(), CExpr::Int(2))),
                    then: here + 1,
                    els: here + 3,
                },
                what.clone(),
            ));
            v.push(self.instr(
                InstrKind::Barrier {
                    op: BarrierOp::Wait(WaitSpec {
                        parity: Some(CExpr::Int(1)),
                        ..WaitSpec::default()
                    }),
                    sel: BarrierSel::Decl(self.p.copy_start_decl(s, k)),
                    result: None,
                },
                format!("waits for {what}"),
            ));
            v.push(self.assign(r, CExpr::Int(0)));
        }
    }
}
