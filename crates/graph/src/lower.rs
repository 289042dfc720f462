//! Lowering: syntax tree + model -> [`Program`]. Resolves names, places
//! threads, creates barrier and location instances per scope instance,
//! checks that the model provides every statement, and compiles each body
//! to a control-flow graph (`if`/`while`/`repeat`/`goto` become branches and
//! jumps; `repeat` keeps a hidden counter register instead of unrolling).

use crate::ids::*;
use crate::program::*;
use bc_models::{AbstractOp, BarrierRef, LaunchCount, Model, OperandKind, ProgressModel};
use bc_syntax::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Most threads one test may create (kernels expand to blocks x threads);
/// also the bound on a kernel's `blocks`, `threads` and `cluster_size`.
pub const MAX_THREADS: u32 = 4096;

/// The largest block, cluster or warp number a `thread` may name: with at
/// most [`MAX_THREADS`] threads, numbers below it can place every thread
/// anywhere, and a larger one is surely a mistake (it could not be
/// represented without truncation once past `u32`).
pub const MAX_ID: i64 = MAX_THREADS as i64 - 1;

const BUILTINS: &[(&str, Builtin)] = &[
    ("tid", Builtin::Tid),
    ("bid", Builtin::Bid),
    ("warp", Builtin::Warp),
    ("lane", Builtin::Lane),
    ("ntid", Builtin::Ntid),
];

/// Picks the model: an explicit one (from `--model` or `--model-file`) wins
/// over the file's `model` line.
pub fn resolve_model(lit: &Litmus, explicit: Option<Model>) -> Result<Model, Diagnostic> {
    if let Some(m) = explicit {
        return Ok(m);
    }
    match &lit.model {
        Some(id) => bc_models::lookup(&id.name).map_err(|msg| Diagnostic::error(id.span, msg)),
        None => {
            let span = lit.name.as_ref().map(|n| n.span).unwrap_or_default();
            Err(Diagnostic::error(span, "no `model` line and no `--model` given"))
        }
    }
}

/// Lowers a parsed file. `text` is the file's source (for statement text).
pub fn lower(lit: &Litmus, text: &str, model: Model) -> Result<Program, Vec<Diagnostic>> {
    let mut l = Lowerer {
        text,
        model: &model,
        diags: Vec::new(),
        mask_sites: Vec::new(),
        first_mask_decl: 0,
        form: ThreadForm::Thread,
        copy_sites: Vec::new(),
    };
    let program = l
        .program(lit)
        .map(|p| crate::copies::add_copy_agents(p, &l.copy_sites))
        .map(with_fence_events)
        .map(with_held_barriers)
        .map(crate::place_regs::propagate_place_registers)
        .map(|mut p| {
            // Whatever lowering asked before the program was complete.
            p.index = Default::default();
            p
        });
    l.diags.sort_by_key(|d| d.span.map(|s| s.start));
    match program {
        Some(p) if l.diags.is_empty() => Ok(p),
        // No program and no diagnostic: the parser already reported why
        // (a missing `litmus` line).
        _ => Err(l.diags),
    }
}

struct Lowerer<'a> {
    text: &'a str,
    model: &'a Model,
    diags: Vec<Diagnostic>,
    /// The `__syncwarp`-style instructions with a lane mask, in code
    /// order: each is a declaration (numbered from `first_mask_decl`) whose
    /// instance for a thread is the barrier of (its warp, its mask value).
    mask_sites: Vec<MaskSite>,
    first_mask_decl: u32,
    /// The form of the body being lowered (host operations are host only).
    form: ThreadForm,
    /// The `cp.async.bulk` statements, by site number.
    copy_sites: Vec<crate::copies::SiteSpec>,
}

/// Marks [`BarrierProps::held`] on every instance of a barrier declaration
/// a copy issue holds (`InstrKind::CopyIssue::hold`).
fn with_held_barriers(mut p: Program) -> Program {
    let held: Vec<u32> = p
        .codes
        .iter()
        .flat_map(|c| &c.instrs)
        .filter_map(|i| match i.kind {
            InstrKind::CopyIssue { hold, .. } => hold,
            _ => None,
        })
        .collect();
    if held.is_empty() {
        return p;
    }
    let instances: Vec<usize> = p
        .threads
        .iter()
        .flat_map(|t| {
            held.iter()
                .filter_map(|&d| t.barriers.get(d as usize).copied().flatten())
        })
        .map(|b| b.index())
        .collect();
    for b in instances {
        p.barriers[b].props.held = true;
    }
    p
}

/// Sets [`Program::fence_events`]: a barrier of the program orders memory
/// only through fences, or some arrive is relaxed, or some thread raises a
/// transaction count on its own (`mbarrier.expect_tx`, relaxed:
/// `EventKind::Tx::relaxed`), and some code makes
/// plain accesses (a copy agent's code too) for the race rule to judge;
/// and [`Program::proxy_events`]: some copy runs in the async proxy.
fn with_fence_events(mut p: Program) -> Program {
    let relaxed = p
        .codes
        .iter()
        .flat_map(|c| &c.instrs)
        .any(|i| matches!(&i.kind, InstrKind::Barrier { op, .. } if op.orders_no_memory()));
    let fenced = relaxed || p.barriers.iter().any(|b| b.props.needs_fence);
    let accesses = p.codes.iter().flat_map(|c| &c.instrs).any(|i| {
        matches!(
            i.kind,
            InstrKind::Read { .. } | InstrKind::Write { .. } | InstrKind::CopyIssue { .. }
        )
    });
    p.fence_events = fenced && accesses;
    p.proxy_events = p.copy_sites.iter().any(|c| c.async_proxy);
    p
}

/// One instruction site with a lane mask operand.
struct MaskSite {
    /// The model's predefined barrier the lowering names (the warp barrier).
    id: i64,
    mask: CExpr,
}

/// Placement of one thread before instances are known.
struct Placed {
    name: String,
    kind: ThreadKind,
    decl: usize,
    block: u32,
    cluster: u32,
    warp: u32,
    tid: u32,
    ntid: u32,
    lane: u32,
    cooperative: bool,
    /// The grid (launch) the thread belongs to: one per kernel declaration,
    /// one for the explicit `thread`s together; `None` for host threads,
    /// which are in no grid, block, cluster or warp.
    grid: Option<u32>,
    /// Prefix naming the grid in instance names (`K.` for a named kernel).
    grid_label: String,
}

/// Leaves out the drops at a thread's end that nothing can observe. A drop
/// lowers a barrier's own expected count, and the only operations that read
/// that count are arrivals without a written thread count, `arrive_drop`,
/// drops, inits, joins and transaction-count changes (whatever completes a
/// phase against the barrier's own count). A barrier every operation of which
/// is a wait or an arrival with a written count (`bar.sync ID, N`: its phase
/// completes at exactly N, "Convergence Contract and Deadlock Conditions")
/// completes the same phases with or without the drops, so its instances
/// keep no exit drops: fewer events, and fewer bmo orders to tell apart.
/// Operations whose barrier is chosen at run time count for every barrier
/// they may choose; operations a thread's place never lets it reach
/// (`classes::reachable_in`) do not count, as for the explorer's analyses,
/// which must agree with this one (a barrier they call uniformly counted
/// keeps no exit drops).
fn only_counted_exit_drops(
    barriers: &mut [BarrierInstance],
    threads: &[ThreadInfo],
    codes: &[Code],
    groups: &[Vec<u32>],
) {
    let mut reads_count = vec![false; barriers.len()];
    for info in threads {
        let code = &codes[info.code.index()];
        let live = crate::classes::reachable_in(info, code);
        for (_, ins) in code.instrs.iter().enumerate().filter(|(pc, _)| live[*pc]) {
            let InstrKind::Barrier { sel, op, .. } = &ins.kind else {
                continue;
            };
            let counted = match op {
                BarrierOp::Wait(_) => true,
                BarrierOp::Arrive(spec) => spec.count_match && spec.set_count.is_some(),
                _ => false,
            };
            if counted {
                continue;
            }
            for d in sel.decls(groups) {
                if let Some(Some(b)) = info.barriers.get(d as usize) {
                    reads_count[b.index()] = true;
                }
            }
        }
    }
    for (b, reads) in barriers.iter_mut().zip(reads_count) {
        b.exit_drops &= reads;
    }
}

impl Lowerer<'_> {
    fn err(&mut self, span: Span, msg: impl Into<String>) {
        self.diags.push(Diagnostic::error(span, msg));
    }

    fn program(&mut self, lit: &Litmus) -> Option<Program> {
        // The parser already reported a missing `litmus` line.
        lit.name.as_ref()?;
        let progress = match &lit.progress {
            Some(p) => ProgressModel::parse(&p.name).unwrap_or_else(|msg| {
                self.err(p.span, msg);
                self.model.default_progress
            }),
            None => self.model.default_progress,
        };
        let expect = lit.expect.as_ref().map(|e| {
            let mut set = BTreeSet::new();
            for k in &e.kinds {
                if k.name == "ok" {
                    if e.kinds.len() > 1 {
                        self.err(
                            k.span,
                            "`ok` means no finding and cannot be combined with finding kinds",
                        );
                    }
                } else if let Some(f) = FindingKind::parse(&k.name) {
                    set.insert(f);
                }
            }
            set
        });

        // Declarations. A barrier array `full[N]` declares the barriers
        // `full[0]` .. `full[N-1]` and a hidden one, `full[?]`, that an
        // index out of range selects at run time (every use of it is
        // `ub(invalid-barrier)`).
        let mut decl_names: HashMap<&str, Span> = HashMap::new();
        let mut barrier_decls: Vec<ExpandedBarrier> = Vec::new();
        let mut arrays: Vec<BarrierArray> = Vec::new();
        for b in &lit.barriers {
            self.declare(&mut decl_names, &b.name);
            if let Some((k, span)) = b.count {
                if k <= 0 {
                    self.err(span, format!("expected count must be positive, found {k}"));
                }
            }
            let scope = self.scope_attr(&b.attrs, "barrier");
            let count = b.count.map(|(c, _)| c);
            match b.len {
                None if barrier_decls.len() >= MAX_BARRIER_DECLS => {
                    self.err(
                        b.span,
                        format!("the test declares more than {MAX_BARRIER_DECLS} barriers; at most {MAX_BARRIER_DECLS} are supported"),
                    );
                    return None;
                }
                None => barrier_decls.push(ExpandedBarrier {
                    name: b.name.name.clone(),
                    scope,
                    count,
                    span: b.span,
                    out_of_range: false,
                }),
                Some((n, span)) => {
                    if !(1..=MAX_ARRAY).contains(&n) {
                        self.err(
                            span,
                            format!("a barrier array has 1 to {MAX_ARRAY} elements, found {n}"),
                        );
                    }
                    let n = n.clamp(1, MAX_ARRAY);
                    if barrier_decls.len() + n as usize + 1 > MAX_BARRIER_DECLS {
                        self.err(
                            b.span,
                            format!(
                                "the test declares more than {MAX_BARRIER_DECLS} barriers \
                                 (an array of N declares N + 1); at most {MAX_BARRIER_DECLS} are supported"
                            ),
                        );
                        return None;
                    }
                    arrays.push(BarrierArray {
                        name: b.name.name.clone(),
                        first: barrier_decls.len() as u32,
                        len: n as u32,
                    });
                    for i in 0..=n {
                        barrier_decls.push(ExpandedBarrier {
                            name: if i < n {
                                format!("{}[{i}]", b.name.name)
                            } else {
                                format!("{}[?]", b.name.name)
                            },
                            scope,
                            count,
                            span: b.span,
                            out_of_range: i == n,
                        });
                    }
                }
            }
        }
        let mut var_scopes = Vec::new();
        for v in &lit.vars {
            self.declare(&mut decl_names, &v.name);
            var_scopes.push(self.scope_attr(&v.attrs, "var"));
        }

        // Threads and placement.
        let placed = self.place(lit);
        let nthreads = placed.len();
        if nthreads == 0 && lit.threads.is_empty() {
            let span = lit.name.as_ref().map(|n| n.span).unwrap_or_default();
            self.err(span, "the test declares no thread or kernel");
        }
        if nthreads > MAX_THREADS as usize {
            self.err(
                lit.threads[0].span,
                format!("the test creates {nthreads} threads; at most {MAX_THREADS} are supported"),
            );
            return None;
        }

        // Instances: one per scope instance, and warps, blocks, clusters
        // and grids belong to one grid (launch) - block 0 of two kernels is
        // two blocks. A host thread is in no grid: it holds only thread-
        // and device-scope instances.
        let key = |p: &Placed, i: usize, s: Scope| -> Option<(u8, u32, u32, u32)> {
            Some(match s {
                Scope::Thread => (0, i as u32, 0, 0),
                Scope::Warp => (1, p.grid?, p.block, p.warp),
                Scope::Block => (2, p.grid?, p.block, 0),
                Scope::Cluster => (3, p.grid?, p.cluster, 0),
                Scope::Grid => (5, p.grid?, 0, 0),
                Scope::Device => (4, 0, 0, 0),
            })
        };
        let inst_name = |decl: &str, k: (u8, u32, u32, u32), p: &Placed, many: bool| -> String {
            if !many {
                return decl.to_string();
            }
            let g = &p.grid_label;
            match k.0 {
                0 => format!("{decl}@{}", p.name),
                1 => format!("{decl}@{g}b{}w{}", k.2, k.3),
                2 => format!("{decl}@{g}b{}", k.2),
                3 => format!("{decl}@{g}c{}", k.2),
                5 if !g.is_empty() => format!("{decl}@{}", g.trim_end_matches('.')),
                _ => decl.to_string(),
            }
        };
        // Barrier declarations: the file's, then the model's predefined
        // barriers that the test's instructions name.
        let mut decls: Vec<BarrierDecl> = barrier_decls
            .iter()
            .map(|b| BarrierDecl {
                name: b.name.clone(),
                scope: b.scope,
                count: match b.count {
                    Some(c) if !b.out_of_range => LaunchCount::Fixed(c),
                    _ => LaunchCount::None,
                },
                props: BarrierProps {
                    out_of_range: b.out_of_range,
                    ..BarrierProps::default()
                },
                span: b.span,
                id: None,
            })
            .collect();
        let mut used_ids: Vec<i64> = Vec::new();
        for t in &lit.threads {
            self.predefined_ids(&t.body, &mut used_ids);
        }
        for pb in self.model.barriers.iter().filter(|pb| used_ids.contains(&pb.id)) {
            decls.push(BarrierDecl {
                name: predefined_name(pb),
                scope: pb.scope,
                count: pb.count,
                props: pb.props,
                span: Span::default(),
                id: Some(pb.id),
            });
        }
        if used_ids.contains(&OUT_OF_RANGE_BARRIER_ID) {
            decls.push(BarrierDecl {
                name: "the barrier ids".into(),
                scope: Scope::Block,
                count: LaunchCount::None,
                props: BarrierProps {
                    out_of_range: true,
                    ..BarrierProps::default()
                },
                span: Span::default(),
                id: Some(OUT_OF_RANGE_BARRIER_ID),
            });
        }
        // Named kernels, in declaration order.
        let named_kernels: Vec<String> = lit
            .threads
            .iter()
            .filter(|t| t.form == ThreadForm::Kernel)
            .filter_map(|t| t.name.as_ref().map(|n| n.name.clone()))
            .collect();
        let kernel_of_decl = |d: usize| -> Option<u32> {
            let t = &lit.threads[d];
            let name = t.name.as_ref().filter(|_| t.form == ThreadForm::Kernel)?;
            named_kernels.iter().position(|k| *k == name.name).map(|i| i as u32)
        };
        // Code: one body per declaration. Declarations past the model's
        // barriers are the lane-mask sites the code names.
        self.first_mask_decl = decls.len() as u32;
        let names = Names {
            barriers: barrier_decls.iter().map(|b| b.name.as_str()).collect(),
            arrays,
            var_ix: {
                let mut ix = HashMap::new();
                for (d, v) in lit.vars.iter().enumerate() {
                    ix.entry(v.name.name.as_str()).or_insert(d);
                }
                ix
            },
            kernels: named_kernels.clone(),
            predefined: decls
                .iter()
                .enumerate()
                .filter_map(|(i, d)| d.id.map(|id| (id, i as u32)))
                .collect(),
        };
        let mut codes = Vec::new();
        for t in &lit.threads {
            self.form = t.form;
            codes.push(self.code(&t.body, &names));
        }

        let warp_lanes: Vec<u64> = placed
            .iter()
            .map(|p| {
                placed
                    .iter()
                    .filter(|q| {
                        q.kind == ThreadKind::Device
                            && q.grid == p.grid
                            && q.block == p.block
                            && q.warp == p.warp
                            && q.lane < 64
                    })
                    .fold(0u64, |m, q| m | 1 << q.lane)
            })
            .collect();
        // Warps numbered across the test, in (grid, block, warp) order.
        let warps: BTreeSet<(Option<u32>, u32, u32)> = placed
            .iter()
            .filter(|p| p.kind == ThreadKind::Device)
            .map(|p| (p.grid, p.block, p.warp))
            .collect();
        let warp_id = |p: &Placed| -> u32 {
            if p.kind != ThreadKind::Device {
                return u32::MAX;
            }
            warps.iter().position(|&k| k == (p.grid, p.block, p.warp)).unwrap_or(0) as u32
        };
        let warp_ids: Vec<u32> = placed.iter().map(warp_id).collect();
        // Blocks and clusters numbered the same way.
        let number = |key: &dyn Fn(&Placed) -> (Option<u32>, u32)| -> Vec<u32> {
            let all: BTreeSet<(Option<u32>, u32)> = placed
                .iter()
                .filter(|p| p.kind == ThreadKind::Device)
                .map(key)
                .collect();
            placed
                .iter()
                .map(|p| match p.kind {
                    ThreadKind::Device => all.iter().position(|&k| k == key(p)).unwrap_or(0) as u32,
                    _ => u32::MAX,
                })
                .collect()
        };
        let block_ids = number(&|p| (p.grid, p.block));
        let cluster_ids = number(&|p| (p.grid, p.cluster));
        // What the instances below will take, counted before any is built
        // (issue 33, point 8): each declaration has one instance per
        // instance of its scope, and each thread a table entry per
        // declaration.
        let mut scope_instances: Vec<(Scope, u64)> = Vec::new();
        let mut instances_of = |s: Scope| -> u64 {
            if let Some(&(_, n)) = scope_instances.iter().find(|(x, _)| *x == s) {
                return n;
            }
            let n = (placed.iter().enumerate())
                .filter_map(|(i, p)| key(p, i, s))
                .collect::<BTreeSet<_>>()
                .len()
                .max(1) as u64;
            scope_instances.push((s, n));
            n
        };
        let fallback = lit.threads.first().map(|t| t.span).unwrap_or_default();
        let (mut instances, mut entries) = (0u64, 0u64);
        let sized = (decls.iter().map(|b| (b.scope, b.span)))
            .chain(lit.vars.iter().zip(&var_scopes).map(|(v, &s)| (s, v.name.span)));
        for (scope, span) in sized {
            instances += instances_of(scope);
            entries += placed.len() as u64;
            if instances > MAX_INSTANCES || entries > MAX_THREAD_ENTRIES {
                let span = if span == Span::default() { fallback } else { span };
                let msg = if instances > MAX_INSTANCES {
                    format!(
                        "with this declaration the test has more than {MAX_INSTANCES} barrier and location \
                         instances (one per instance of each declaration's scope: {} thread(s)); \
                         at most {MAX_INSTANCES} are supported",
                        placed.len()
                    )
                } else {
                    format!(
                        "with this declaration the test has more than {MAX_THREAD_ENTRIES} (thread, declaration) \
                         pairs ({} thread(s)); at most {MAX_THREAD_ENTRIES} are supported",
                        placed.len()
                    )
                };
                self.err(span, msg);
                return None;
            }
        }
        let mut barriers = Vec::new();
        let mut thread_barriers = vec![Vec::new(); placed.len()];
        for b in &decls {
            let keys: Vec<_> = placed.iter().enumerate().map(|(i, p)| key(p, i, b.scope)).collect();
            let distinct: BTreeSet<_> = keys.iter().flatten().copied().collect();
            let mut ids = BTreeMap::new();
            for (i, k) in keys.iter().enumerate() {
                let Some(k) = k else {
                    thread_barriers[i].push(None);
                    continue;
                };
                let id = *ids.entry(*k).or_insert_with(|| {
                    let here = &placed[i];
                    // Implicit counts count the device threads of this
                    // instance's grid only (never host threads, never
                    // another kernel's block of the same number).
                    let grid = || placed.iter().filter(|p| p.grid.is_some() && p.grid == here.grid);
                    let launch_count = match b.count {
                        LaunchCount::None => None,
                        LaunchCount::Fixed(c) => Some(c),
                        LaunchCount::WavesInBlock => Some(grid().filter(|p| p.block == here.block).count() as i64),
                        LaunchCount::BlocksInCluster => Some(
                            grid()
                                .filter(|p| p.cluster == here.cluster)
                                .map(|p| p.block)
                                .collect::<BTreeSet<_>>()
                                .len() as i64,
                        ),
                        LaunchCount::ThreadsInCluster => {
                            Some(grid().filter(|p| p.cluster == here.cluster).count() as i64)
                        }
                        LaunchCount::ThreadsInGrid => Some(grid().count() as i64),
                    };
                    barriers.push(BarrierInstance {
                        name: inst_name(&b.name, *k, here, distinct.len() > 1),
                        decl_name: b.name.clone(),
                        launch_count,
                        decl_span: b.span,
                        props: b.props,
                        syncwarp: None,
                        exit_drops: b.props.drop_at_end,
                    });
                    BarrierId(barriers.len() as u32 - 1)
                });
                thread_barriers[i].push(Some(id));
            }
            if placed.is_empty() {
                barriers.push(BarrierInstance {
                    name: b.name.clone(),
                    decl_name: b.name.clone(),
                    launch_count: match b.count {
                        LaunchCount::Fixed(c) => Some(c),
                        _ => None,
                    },
                    decl_span: b.span,
                    props: b.props,
                    syncwarp: None,
                    exit_drops: b.props.drop_at_end,
                });
            }
        }
        // One barrier per (warp, mask value) for the lane-mask sites, after
        // the declarations' instances: a thread's instance of site k is the
        // barrier of its warp and the mask the site evaluates to for it.
        let width = if self.model.warp_size >= 64 {
            u64::MAX
        } else {
            (1u64 << self.model.warp_size) - 1
        };
        let mut mask_ids: BTreeMap<(i64, Option<u32>, u32, u32, u64), BarrierId> = BTreeMap::new();
        for site in &self.mask_sites {
            let Some(pb) = self.model.barrier(site.id) else {
                continue;
            };
            for (i, here) in placed.iter().enumerate() {
                // A host thread is in no warp.
                if here.kind != ThreadKind::Device {
                    thread_barriers[i].push(None);
                    continue;
                }
                let v = eval_with(&site.mask, &|leaf| match leaf {
                    CExpr::Builtin(Builtin::Tid) => here.tid as i64,
                    CExpr::Builtin(Builtin::Bid) => here.block as i64,
                    CExpr::Builtin(Builtin::Warp) => here.warp as i64,
                    CExpr::Builtin(Builtin::Lane) => here.lane as i64,
                    CExpr::Builtin(Builtin::Ntid) => here.ntid as i64,
                    _ => 0,
                });
                let mask = v as u64 & width;
                let key = (site.id, here.grid, here.block, here.warp, mask);
                let id = *mask_ids.entry(key).or_insert_with(|| {
                    let named: Vec<ThreadId> = placed
                        .iter()
                        .enumerate()
                        .filter(|(_, q)| {
                            q.kind == ThreadKind::Device
                                && q.grid == here.grid
                                && q.block == here.block
                                && q.warp == here.warp
                                && q.lane < 64
                                && mask & (1 << q.lane) != 0
                        })
                        .map(|(j, _)| ThreadId(j as u32))
                        .collect();
                    let place = if warps.len() > 1 {
                        format!("@{}b{}w{}", here.grid_label, here.block, here.warp)
                    } else {
                        String::new()
                    };
                    let name = format!("{}{place}[{mask:#x}]", predefined_name(pb));
                    barriers.push(BarrierInstance {
                        name: name.clone(),
                        decl_name: name,
                        launch_count: Some(named.len() as i64),
                        decl_span: Span::default(),
                        props: pb.props,
                        exit_drops: pb.props.drop_at_end,
                        syncwarp: Some(SyncwarpMask {
                            warp: warp_ids[i],
                            mask,
                            named,
                        }),
                    });
                    BarrierId(barriers.len() as u32 - 1)
                });
                thread_barriers[i].push(Some(id));
            }
        }
        // Exclusion groups, as declaration indices, and the mutually
        // exclusive instance pairs they give in each thread's scope.
        let groups: Vec<Vec<u32>> = self
            .model
            .groups
            .iter()
            .map(|g| {
                decls
                    .iter()
                    .enumerate()
                    .filter(|(_, d)| d.id.is_some_and(|id| g.ids.contains(&id)))
                    .map(|(i, _)| i as u32)
                    .collect()
            })
            .collect();
        let mut mutually_exclusive = BTreeSet::new();
        for tb in &thread_barriers {
            for g in &groups {
                for (x, &a) in g.iter().enumerate() {
                    for &b in &g[x + 1..] {
                        if let (Some(a), Some(b)) = (tb[a as usize], tb[b as usize]) {
                            mutually_exclusive.insert((a, b));
                        }
                    }
                }
            }
        }
        let mut locs = Vec::new();
        let mut thread_locs = vec![Vec::new(); placed.len()];
        let mut loc_instances_of_decl: Vec<Vec<LocId>> = Vec::new();
        for (d, v) in lit.vars.iter().enumerate() {
            let scope = var_scopes[d];
            let keys: Vec<_> = placed.iter().enumerate().map(|(i, p)| key(p, i, scope)).collect();
            let distinct: BTreeSet<_> = keys.iter().flatten().copied().collect();
            let mut ids = BTreeMap::new();
            for (i, k) in keys.iter().enumerate() {
                let Some(k) = k else {
                    thread_locs[i].push(None);
                    continue;
                };
                let id = *ids.entry(*k).or_insert_with(|| {
                    locs.push(LocInstance {
                        name: inst_name(&v.name.name, *k, &placed[i], distinct.len() > 1),
                        init: v.init,
                    });
                    LocId(locs.len() as u32 - 1)
                });
                thread_locs[i].push(Some(id));
            }
            if placed.is_empty() {
                locs.push(LocInstance {
                    name: v.name.name.clone(),
                    init: v.init,
                });
            }
            loc_instances_of_decl.push(ids.values().copied().collect());
        }

        // A host thread is in no block, cluster, warp or grid: it cannot
        // name an object of such a scope.
        for (i, p) in placed.iter().enumerate() {
            if p.kind == ThreadKind::Host {
                self.host_reach(
                    &p.name,
                    &codes[p.decl],
                    &decls,
                    &groups,
                    &thread_barriers[i],
                    &thread_locs[i],
                    lit,
                );
            }
        }

        let threads: Vec<ThreadInfo> = placed
            .into_iter()
            .enumerate()
            .map(|(i, p)| ThreadInfo {
                name: p.name,
                kind: p.kind,
                code: CodeId(p.decl as u32),
                block: p.block,
                cluster: p.cluster,
                warp: p.warp,
                tid: p.tid,
                ntid: p.ntid,
                lane: p.lane,
                cooperative: p.cooperative,
                warp_lanes: warp_lanes[i],
                warp_id: warp_ids[i],
                block_id: block_ids[i],
                cluster_id: cluster_ids[i],
                kernel: kernel_of_decl(p.decl),
                barriers: std::mem::take(&mut thread_barriers[i]),
                locs: std::mem::take(&mut thread_locs[i]),
            })
            .collect();
        let mut seen = BTreeSet::new();
        for t in &threads {
            if !seen.insert(t.name.clone()) {
                self.err(
                    lit.threads[t.code.index()].span,
                    format!("thread name `{}` is used twice", t.name),
                );
            }
        }

        // Assertions.
        let mut asserts = Vec::new();
        for a in &lit.asserts {
            if let Some(cond) = self.assert_expr(&a.cond, &threads, &codes, &names, &loc_instances_of_decl) {
                let text = self
                    .text
                    .get(a.span.start as usize..a.span.end as usize)
                    .unwrap_or("")
                    .to_string();
                asserts.push(AssertSpec {
                    quantifier: a.quantifier,
                    cond,
                    span: a.span,
                    text,
                });
            }
        }

        let kernels: Vec<KernelInfo> = named_kernels
            .iter()
            .enumerate()
            .map(|(k, name)| KernelInfo {
                name: name.clone(),
                threads: threads
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| t.kernel == Some(k as u32))
                    .map(|(i, _)| ThreadId(i as u32))
                    .collect(),
            })
            .collect();
        only_counted_exit_drops(&mut barriers, &threads, &codes, &groups);
        Some(Program {
            test: lit.name.as_ref().map(|n| n.name.clone()).unwrap_or_default(),
            about: lit.about.clone(),
            model: self.model.clone(),
            progress,
            threads,
            codes,
            barriers,
            declared_barriers: barrier_decls
                .iter()
                .map(|b| crate::program::DeclaredBarrier {
                    name: b.name.clone(),
                    launch_count: b.count.filter(|_| !b.out_of_range),
                    out_of_range: b.out_of_range,
                })
                .collect(),
            locs,
            mutually_exclusive: mutually_exclusive.into_iter().collect(),
            groups,
            kernels,
            asserts,
            expect,
            copy_pools: Vec::new(),
            copy_sites: Vec::new(),
            copy_first_decl: 0,
            copy_first_code: 0,
            fence_events: false,
            proxy_events: false,
            index: Default::default(),
        })
    }

    /// Reports each operation of host thread `name`'s code on a barrier or
    /// location it holds no instance of (one of block, cluster, warp or grid
    /// scope).
    #[allow(clippy::too_many_arguments)]
    fn host_reach(
        &mut self,
        name: &str,
        code: &Code,
        decls: &[BarrierDecl],
        groups: &[Vec<u32>],
        barriers: &[Option<BarrierId>],
        locs: &[Option<LocId>],
        lit: &Litmus,
    ) {
        let mut last = None;
        for ins in &code.instrs {
            // One diagnostic per statement (a statement may lower to several
            // instructions).
            if last == Some(ins.span) {
                continue;
            }
            let mut bars: Vec<u32> = Vec::new();
            let mut vars: Vec<u32> = Vec::new();
            vars.extend(ins.kind.loc_decl());
            match &ins.kind {
                InstrKind::Barrier { sel, .. } => bars = sel.decls(groups),
                InstrKind::Await(cond) => cond.loc_decls(&mut vars),
                _ => {}
            }
            let bar = bars.into_iter().find(|&d| barriers[d as usize].is_none());
            let var = vars.into_iter().find(|&d| locs[d as usize].is_none());
            let what = match (bar, var) {
                (Some(d), _) => match decls.get(d as usize) {
                    Some(d) => format!("barrier `{}` (scope={})", d.name, d.scope.name()),
                    // Past the declarations: a lane-mask site's barrier
                    // (`__syncwarp`, `tile.sync`), one per warp.
                    None => "a lane-mask barrier (scope=warp)".to_string(),
                },
                (None, Some(d)) => {
                    let v = &lit.vars[d as usize];
                    let scope = v
                        .attrs
                        .iter()
                        .find_map(|a| a.name_value.as_ref().map(|n| n.name.clone()))
                        .unwrap_or_default();
                    format!("location `{}` (scope={scope})", v.name.name)
                }
                (None, None) => continue,
            };
            last = Some(ins.span);
            self.err(
                ins.span,
                format!(
                    "host thread `{name}` is in no block, cluster, warp or grid, so it has no instance of {what}; hosts can use thread- and device-scope objects"
                ),
            );
        }
    }

    fn declare<'b>(&mut self, names: &mut HashMap<&'b str, Span>, id: &'b Ident) {
        if BUILTINS.iter().any(|(b, _)| *b == id.name) {
            self.err(id.span, format!("`{}` is a builtin and cannot be declared", id.name));
        } else if names.insert(&id.name, id.span).is_some() {
            self.err(id.span, format!("`{}` is declared twice", id.name));
        }
    }

    fn scope_attr(&mut self, attrs: &[Attr], what: &str) -> Scope {
        let mut scope = if what == "var" { Scope::Device } else { Scope::Block };
        for a in attrs {
            match (a.key.name.as_str(), &a.name_value) {
                ("scope", Some(v)) => match Scope::parse(&v.name) {
                    Some(s) => scope = s,
                    None => {
                        // The format's five scopes and the `grid` extension
                        // (docs/litmus.md, "Scopes and instances").
                        const SCOPES: [&str; 6] = ["thread", "warp", "block", "cluster", "device", "grid"];
                        let hint = bc_syntax::kinds::closest(&v.name, SCOPES)
                            .map_or(String::new(), |k| format!(" (did you mean `{k}`?)"));
                        self.err(
                            v.span,
                            format!("unknown scope `{}`{hint}; scopes: {}", v.name, SCOPES.join(", ")),
                        )
                    }
                },
                _ => self.err(
                    a.key.span,
                    format!("unknown {what} attribute `{}` (only `scope=`)", a.key.name),
                ),
            }
        }
        scope
    }

    /// The integer value of attribute `a`, checked to lie in `lo..=hi`, so
    /// that no placement number is ever truncated (a `block=4294967296`
    /// once landed in block 0). `None` after an error at the value.
    fn ranged(&mut self, a: &Attr, lo: i64, hi: i64) -> Option<u32> {
        match a.value {
            Some((v, _)) if (lo..=hi).contains(&v) => u32::try_from(v).ok(),
            Some((v, span)) => {
                self.err(
                    span,
                    format!("`{}` must be an integer from {lo} to {hi}, found {v}", a.key.name),
                );
                None
            }
            None => {
                let span = a.name_value.as_ref().map_or(a.key.span, |n| a.key.span.to(n.span));
                self.err(
                    span,
                    format!("`{}` needs an integer value from {lo} to {hi}", a.key.name),
                );
                None
            }
        }
    }

    /// Places every thread. Placement numbers are range-checked (see
    /// [`MAX_THREADS`] and [`MAX_ID`]); kernel sizes are multiplied with
    /// checked arithmetic, and a kernel that would take the test past
    /// [`MAX_THREADS`] is reported and not expanded.
    fn place(&mut self, lit: &Litmus) -> Vec<Placed> {
        let warp_size = self.model.warp_size;
        let mut out = Vec::new();
        let hosts_ok = self.model.provides("launch");
        let max = MAX_THREADS as i64;
        // Explicit threads, first pass: each one's block (checked once, here),
        // and the count per block for `ntid`.
        let mut block_of: Vec<u32> = vec![0; lit.threads.len()];
        let mut per_block: BTreeMap<u32, u32> = BTreeMap::new();
        for (d, t) in lit.threads.iter().enumerate() {
            if t.form == ThreadForm::Thread {
                if let Some(a) = t.attrs.iter().find(|a| a.key.name == "block") {
                    block_of[d] = self.ranged(a, 0, MAX_ID).unwrap_or(0);
                }
                *per_block.entry(block_of[d]).or_default() += 1;
            }
        }
        let explicit = !per_block.is_empty();
        let mut index_in_block: BTreeMap<u32, u32> = BTreeMap::new();
        // Lanes count within the warp: the n-th explicit thread placed in
        // a (block, warp) is its lane n (a thread alone in `warp=1` is lane
        // 0 of warp 1, not lane 1; issue 32, point 10).
        let mut index_in_warp: BTreeMap<(u32, u32), u32> = BTreeMap::new();
        for (d, t) in lit.threads.iter().enumerate() {
            match t.form {
                ThreadForm::Thread | ThreadForm::Host => {
                    let (mut cluster, mut warp) = (None, None);
                    for a in &t.attrs {
                        match (t.form, a.key.name.as_str()) {
                            // Checked in the first pass.
                            (ThreadForm::Thread, "block") => {}
                            (ThreadForm::Thread, "cluster") => cluster = self.ranged(a, 0, MAX_ID),
                            (ThreadForm::Thread, "warp") => warp = self.ranged(a, 0, MAX_ID),
                            _ => self.err(a.key.span, format!("unknown thread attribute `{}`", a.key.name)),
                        }
                    }
                    let name = t.name.as_ref().map(|n| n.name.clone()).unwrap_or_default();
                    if t.form == ThreadForm::Host {
                        if !hosts_ok {
                            self.err(
                                t.span,
                                format!(
                                    "model `{}` has no host threads (they need a model that provides `launch`)",
                                    self.model.name
                                ),
                            );
                        }
                        out.push(Placed {
                            name,
                            kind: ThreadKind::Host,
                            decl: d,
                            block: 0,
                            cluster: 0,
                            warp: 0,
                            tid: 0,
                            ntid: 1,
                            lane: 0,
                            cooperative: false,
                            grid: None,
                            grid_label: String::new(),
                        });
                        continue;
                    }
                    let block = block_of[d];
                    let idx = index_in_block.entry(block).or_default();
                    let tid = *idx;
                    *idx += 1;
                    let warp = warp.unwrap_or(tid / warp_size);
                    let in_warp = index_in_warp.entry((block, warp)).or_default();
                    if *in_warp == warp_size && warp_size > 1 {
                        self.err(
                            t.span,
                            format!(
                                "warp {warp} of block {block} already holds {warp_size} threads (its lanes 0 to {})",
                                warp_size - 1
                            ),
                        );
                    }
                    let lane = *in_warp % warp_size;
                    *in_warp += 1;
                    out.push(Placed {
                        name,
                        kind: ThreadKind::Device,
                        decl: d,
                        block,
                        cluster: cluster.unwrap_or(block),
                        warp,
                        tid,
                        ntid: per_block[&block],
                        lane,
                        cooperative: false,
                        grid: Some(0),
                        grid_label: String::new(),
                    });
                }
                ThreadForm::Kernel => {
                    let (mut blocks, mut threads, mut cluster_size) = (Some(1), Some(1), Some(1));
                    let mut cooperative = false;
                    for a in &t.attrs {
                        match a.key.name.as_str() {
                            "blocks" => blocks = self.ranged(a, 1, max),
                            "threads" => threads = self.ranged(a, 1, max),
                            "cluster_size" => cluster_size = self.ranged(a, 1, max),
                            "cooperative" if a.value.is_none() && a.name_value.is_none() => cooperative = true,
                            "cooperative" => self.err(a.key.span, "`cooperative` is a flag and takes no value"),
                            _ => self.err(a.key.span, format!("unknown kernel attribute `{}`", a.key.name)),
                        }
                    }
                    if let Some(n) = &t.name {
                        if !hosts_ok {
                            self.err(
                                n.span,
                                format!(
                                    "model `{}` has no host `launch`, so a named kernel would never start",
                                    self.model.name
                                ),
                            );
                        }
                    }
                    let (Some(blocks), Some(threads), Some(cluster_size)) = (blocks, threads, cluster_size) else {
                        continue;
                    };
                    // Both factors are at most MAX_THREADS, so the product
                    // cannot overflow; checked all the same.
                    let total = blocks.checked_mul(threads).filter(|&n| n <= MAX_THREADS);
                    let Some(total) = total else {
                        self.err(
                            t.span,
                            format!(
                                "kernel creates {} threads; at most {MAX_THREADS} are supported",
                                blocks as u64 * threads as u64
                            ),
                        );
                        continue;
                    };
                    if out.len() as u64 + total as u64 > MAX_THREADS as u64 {
                        self.err(
                            t.span,
                            format!(
                                "with this kernel the test creates {} threads; at most {MAX_THREADS} are supported",
                                out.len() as u64 + total as u64
                            ),
                        );
                        continue;
                    }
                    if blocks % cluster_size != 0 {
                        self.err(
                            t.span,
                            format!("blocks={blocks} is not a multiple of cluster_size={cluster_size}"),
                        );
                        continue;
                    }
                    let prefix = t.name.as_ref().map(|n| format!("{}.", n.name)).unwrap_or_default();
                    // Each kernel is a grid of its own; an unnamed kernel
                    // beside explicit threads is told apart by `kernel.`.
                    let grid_label = if prefix.is_empty() && explicit {
                        "kernel.".to_string()
                    } else {
                        prefix.clone()
                    };
                    for b in 0..blocks {
                        for i in 0..threads {
                            out.push(Placed {
                                name: format!("{prefix}b{b}t{i}"),
                                kind: ThreadKind::Device,
                                decl: d,
                                block: b,
                                cluster: b / cluster_size,
                                warp: i / warp_size,
                                tid: i,
                                ntid: threads,
                                lane: i % warp_size,
                                cooperative,
                                grid: Some(d as u32 + 1),
                                grid_label: grid_label.clone(),
                            });
                        }
                    }
                }
            }
        }
        out
    }

    fn code(&mut self, body: &[Stmt], names: &Names) -> Code {
        let mut c = CodeBuilder {
            code: Code::default(),
            labels: HashMap::new(),
            gotos: Vec::new(),
            written: BTreeSet::new(),
            first_read: BTreeMap::new(),
        };
        self.stmts(&mut c, body, names);
        // Registers start at 0 (litmus spec, "Memory, control flow and host
        // operations"), so reading one before writing it is legal; but a
        // register this body reads and never writes only ever reads the
        // constant 0: almost surely a misspelt instruction or register.
        let mut never_written: Vec<(Span, RegId)> = c
            .first_read
            .iter()
            .filter(|(r, _)| !c.written.contains(r))
            .map(|(r, s)| (*s, *r))
            .collect();
        never_written.sort_by_key(|(s, _)| s.start);
        for (span, r) in never_written {
            let name = c.code.regs[r.index()].clone();
            // A misspelt register: the nearest one the body writes.
            let written = c.written.iter().map(|w| c.code.regs[w.index()].as_str());
            let hint = match bc_syntax::kinds::closest(&name, written) {
                Some(k) => format!("; did you mean `{k}`?"),
                None => "; an instruction?".to_string(),
            };
            self.err(
                span,
                format!(
                    "register `{name}` is never written (registers start at 0, so this reads the constant 0){hint}"
                ),
            );
        }
        let end = c.code.instrs.len() as u32;
        for (at, label) in std::mem::take(&mut c.gotos) {
            match c.labels.get(label.name.as_str()) {
                Some(&target) => c.code.instrs[at].kind = InstrKind::Jump(target.min(end)),
                None => self.err(label.span, format!("unknown label `{}`", label.name)),
            }
        }
        c.code
    }

    fn stmts(&mut self, c: &mut CodeBuilder, body: &[Stmt], names: &Names) {
        for s in body {
            self.stmt(c, s, names);
        }
    }

    fn stmt_text(&self, span: Span) -> String {
        let t = self.text.get(span.start as usize..span.end as usize).unwrap_or("");
        // Compound statements: show their first line only.
        t.lines()
            .next()
            .unwrap_or("")
            .trim()
            .trim_end_matches('{')
            .trim()
            .to_string()
    }

    fn stmt(&mut self, c: &mut CodeBuilder, s: &Stmt, names: &Names) {
        let pc = c.code.instrs.len() as u32;
        for l in &s.labels {
            if c.labels.insert(l.name.clone(), pc).is_some() {
                self.err(l.span, format!("label `{}` is defined twice in this body", l.name));
            }
        }
        let text = self.stmt_text(s.span);
        match &s.kind {
            StmtKind::Nop => {}
            StmtKind::Exit => {
                c.emit(InstrKind::Exit, s.span, &text);
            }
            StmtKind::Goto(label) => {
                let at = c.emit(InstrKind::Jump(u32::MAX), s.span, &text);
                c.gotos.push((at, label.clone()));
            }
            StmtKind::Assign { dest, expr } => {
                let value = self.expr(c, expr, names, false);
                let dest = self.dest_reg(c, dest, names);
                c.emit(InstrKind::Assign { dest, value }, s.span, &text);
            }
            StmtKind::Await(cond) => {
                self.require(s.span, "await");
                let cond = self.expr(c, cond, names, true);
                c.emit(InstrKind::Await(cond), s.span, &text);
            }
            StmtKind::If { cond, then, els } => {
                let cond = self.expr(c, cond, names, false);
                let br = c.branch(cond, s.span, &text);
                self.stmts(c, then, names);
                let jump = (!els.is_empty()).then(|| c.emit(InstrKind::Jump(0), s.span, "else"));
                c.land(br);
                self.stmts(c, els, names);
                if let Some(j) = jump {
                    c.code.instrs[j].kind = InstrKind::Jump(c.code.instrs.len() as u32);
                }
            }
            StmtKind::While { cond, body } => {
                let cond = self.expr(c, cond, names, false);
                let br = c.branch(cond, s.span, &text);
                self.stmts(c, body, names);
                c.emit(InstrKind::Jump(pc), s.span, "end while");
                c.land(br);
            }
            StmtKind::Repeat { count, body } => {
                // A hidden counter register: the loop stays a loop.
                let count = self.expr(c, count, names, false);
                let counter = c.write(&format!("repeat@{}", s.span.start));
                c.emit(
                    InstrKind::Assign {
                        dest: counter,
                        value: count,
                    },
                    s.span,
                    &text,
                );
                let head = c.code.instrs.len() as u32;
                let cond = CExpr::Binary(Op::Gt, Box::new(CExpr::Reg(counter)), Box::new(CExpr::Int(0)));
                let br = c.branch(cond, s.span, &text);
                self.stmts(c, body, names);
                let dec = CExpr::Binary(Op::Sub, Box::new(CExpr::Reg(counter)), Box::new(CExpr::Int(1)));
                c.emit(
                    InstrKind::Assign {
                        dest: counter,
                        value: dec,
                    },
                    s.span,
                    "end repeat",
                );
                let back = c.emit(InstrKind::Jump(head), s.span, "end repeat");
                c.code.counted_loops.push(back as u32);
                c.land(br);
            }
            StmtKind::Instr { args, .. }
                if args
                    .iter()
                    .any(|a| matches!(a, Arg::Expr(e) if matches!(e.kind, ExprKind::Index(..)))) =>
            {
                if let Some(chosen) = self.select_element(s, names) {
                    // The labels were bound to this pc above.
                    let inner = Stmt {
                        labels: Vec::new(),
                        ..chosen
                    };
                    self.stmt(c, &inner, names);
                }
            }
            StmtKind::Instr { name, args, .. } if self.register_barrier_operand(&name.name, args).is_some() => {
                let chosen = self.select_barrier_id(s);
                // The labels were bound to this pc above.
                let inner = Stmt {
                    labels: Vec::new(),
                    ..chosen
                };
                self.stmt(c, &inner, names);
            }
            StmtKind::Instr { dest, name, args } => {
                match self.instr(c, s, dest.as_ref(), name, args, names) {
                    Some(kinds) => {
                        for kind in kinds {
                            c.emit(kind, s.span, &text);
                        }
                    }
                    // The statement was reported; its result register still
                    // counts as written, so no second error follows from it.
                    None => {
                        if let Some(d) = dest.as_ref().filter(|d| !d.name.contains('.')) {
                            c.write(&d.name);
                        }
                    }
                }
            }
        }
    }

    /// The position of a barrier-id operand of model instruction `name`
    /// that is computed at run time (`bar.sync r, 64`; PTX allows a
    /// register for the barrier number of `bar`/`barrier`), where the
    /// model has the invalid-barrier rule to judge a value that names no
    /// barrier. Elsewhere a non-constant id stays an error.
    fn register_barrier_operand(&self, name: &str, args: &[Arg]) -> Option<usize> {
        if !self.model.rules.has(bc_models::Rule::InvalidBarrier) {
            return None;
        }
        let ins = self.model.instruction(name)?;
        if masked(ins).is_some() {
            return None;
        }
        ins.lowering.iter().find_map(|l| match l.barrier {
            BarrierRef::Operand(n) => match args.get(n) {
                Some(Arg::Expr(e)) if !matches!(e.kind, ExprKind::Int(_)) => Some(n),
                _ => None,
            },
            _ => None,
        })
    }

    /// An instruction statement whose barrier id is computed at run time,
    /// as the statement it stands for: a chain of `if`s on the id, one
    /// statement per barrier the model lets an operand name, and last the
    /// statement on [`OUT_OF_RANGE_BARRIER_ID`], whose every use is
    /// `ub(invalid-barrier)` (PTX ISA, `bar`/`barrier`: the barrier number
    /// is 0 to 15). The id is an expression of registers and builtins, so
    /// evaluating it once per test is the same as once.
    fn select_barrier_id(&mut self, s: &Stmt) -> Stmt {
        let StmtKind::Instr { name, args, .. } = &s.kind else {
            unreachable!("called on an instruction")
        };
        let at = self
            .register_barrier_operand(&name.name, args)
            .expect("a run-time barrier id");
        let Arg::Expr(id_expr) = &args[at] else {
            unreachable!("an expression operand")
        };
        let with = |id: i64| with_operand(s, at, ExprKind::Int(id));
        let cases = self.operand_barrier_ids().map(|id| (id, with(id))).collect();
        if_chain(id_expr, cases, with(OUT_OF_RANGE_BARRIER_ID), s.span)
    }

    /// The model's barrier ids an operand may name.
    fn operand_barrier_ids(&self) -> impl Iterator<Item = i64> + '_ {
        (self.model.barriers.iter()).filter(|b| b.operand).map(|b| b.id)
    }

    /// An instruction statement with an indexed operand (`arrive full[s]`)
    /// as the statement it stands for: with a constant index, the statement
    /// on that element; with one computed at run time, a chain of `if`s on
    /// the index, one statement per element, and last the statement on the
    /// array's out-of-range barrier, whose every use is
    /// `ub(invalid-barrier)`. The index is an expression of registers and
    /// builtins, so evaluating it once per test is the same as once.
    /// `None` after an error.
    fn select_element(&mut self, s: &Stmt, names: &Names) -> Option<Stmt> {
        let StmtKind::Instr { args, .. } = &s.kind else {
            return None;
        };
        let (at, base, index) = args.iter().enumerate().find_map(|(i, a)| match a {
            Arg::Expr(Expr {
                kind: ExprKind::Index(base, index),
                ..
            }) => Some((i, base, index)),
            _ => None,
        })?;
        let Some(array) = names.arrays.iter().find(|a| a.name == base.name).cloned() else {
            let what = if names.barriers.contains(&base.name.as_str()) || names.var_pos(&base.name).is_some() {
                "is not an array"
            } else {
                "is not a declared barrier array"
            };
            self.err(base.span, format!("`{}` {what}", base.name));
            return None;
        };
        let with = |element: &str| with_operand(s, at, ExprKind::Name(element.to_string()));
        let element = |i: i64| names.barriers[(array.first as i64 + i) as usize].to_string();
        if let ExprKind::Int(v) = index.kind {
            if !(0..array.len as i64).contains(&v) {
                self.err(
                    index.span,
                    format!(
                        "index {v} is out of range: `{}` has {} elements (0 to {})",
                        array.name,
                        array.len,
                        array.len - 1
                    ),
                );
                return None;
            }
            return Some(with(&element(v)));
        }
        if !self.model.rules.has(bc_models::Rule::InvalidBarrier) {
            self.err(
                index.span,
                format!(
                    "a barrier index computed at run time needs a model with the invalid-barrier rule, to judge an index out of range; model `{}` has none (write a constant index)",
                    self.model.name
                ),
            );
            return None;
        }
        let cases = (0..array.len as i64).map(|i| (i, with(&element(i)))).collect();
        Some(if_chain(index, cases, with(&element(array.len as i64)), s.span))
    }

    /// `unknown instruction `X``, with the closest known name when one is
    /// a likely misspelling.
    fn unknown_instruction(&mut self, span: Span, n: &str) {
        let hint = bc_syntax::kinds::closest_statement(n).map_or(String::new(), |k| format!(" (did you mean `{k}`?)"));
        self.err(span, format!("unknown instruction `{n}`{hint}"));
    }

    fn require(&mut self, span: Span, statement: &str) -> bool {
        if self.model.provides(statement) {
            return true;
        }
        let hint = which("it is provided by", bc_models::models_providing(statement));
        self.err(
            span,
            format!("model `{}` does not provide `{statement}`{hint}", self.model.name),
        );
        false
    }

    /// `launch K, stream=S`, `device_sync`, `r = stream_query S`: host
    /// operations, which the litmus spec ("Memory, control flow and host
    /// operations") marks host only; in a device body (a `thread` or a
    /// `kernel`) they are an error.
    fn host_instr(
        &mut self,
        c: &mut CodeBuilder,
        dest: Option<&Ident>,
        name: &Ident,
        args: &[Arg],
        names: &Names,
    ) -> Option<Vec<InstrKind>> {
        let n = name.name.as_str();
        if self.form != ThreadForm::Host {
            let body = if self.form == ThreadForm::Kernel {
                "a kernel"
            } else {
                "a device thread"
            };
            self.err(
                name.span,
                format!("`{n}` is a host operation: only a `host` thread may use it, not {body}"),
            );
            return None;
        }
        if let (Some(d), false) = (dest, n == "stream_query") {
            self.err(d.span, format!("`{n}` returns no value"));
            return None;
        }
        match n {
            "device_sync" => {
                if let Some(a) = args.first() {
                    self.err(a.span(), "`device_sync` takes no operand");
                    return None;
                }
                Some(vec![InstrKind::DeviceSync])
            }
            "stream_query" => {
                let [Arg::Expr(e)] = args else {
                    self.err(name.span, "`stream_query` takes one operand: the stream");
                    return None;
                };
                let stream = self.expr(c, e, names, false);
                let dest = dest.map(|d| self.dest_reg(c, d, names));
                Some(vec![InstrKind::StreamQuery { stream, dest }])
            }
            _ => {
                let (kernel, stream) = match args {
                    [Arg::Expr(k)] => (k, None),
                    [Arg::Expr(k), Arg::Key(key, s)] if key.name == "stream" => (k, Some(s)),
                    _ => {
                        self.err(name.span, "`launch` takes a kernel name and an optional `stream=S`");
                        return None;
                    }
                };
                let found = match &kernel.kind {
                    ExprKind::Name(k) => names.kernels.iter().position(|x| x == k),
                    _ => None,
                };
                let Some(kernel_index) = found else {
                    let what = self.snippet(kernel.span).to_string();
                    self.err(kernel.span, format!("`launch` needs a named kernel, found `{what}`"));
                    return None;
                };
                let stream = stream.map_or(CExpr::Int(0), |s| self.expr(c, s, names, false));
                Some(vec![InstrKind::Launch {
                    kernel: kernel_index as u32,
                    stream,
                }])
            }
        }
    }

    /// The predefined barrier ids the model instructions in `body` name.
    fn predefined_ids(&self, body: &[Stmt], out: &mut Vec<i64>) {
        for s in body {
            match &s.kind {
                StmtKind::Instr { name, args, .. } => {
                    let Some(ins) = self.model.instruction(&name.name) else {
                        continue;
                    };
                    // A lane-mask instruction acts on per-mask barriers, not
                    // on the model's barrier itself.
                    if masked(ins).is_some() {
                        continue;
                    }
                    for l in &ins.lowering {
                        let id = match l.barrier {
                            BarrierRef::Id(id) => Some(id),
                            BarrierRef::Operand(n) => match args.get(n) {
                                Some(Arg::Expr(Expr {
                                    kind: ExprKind::Int(id),
                                    ..
                                })) => Some(*id),
                                _ => None,
                            },
                            BarrierRef::JoinedInGroup(_) | BarrierRef::Object(_) => None,
                        };
                        if let Some(id) = id.filter(|id| !out.contains(id)) {
                            out.push(id);
                        }
                    }
                    // An id computed at run time may name any addressable
                    // barrier, or none.
                    if self.register_barrier_operand(&name.name, args).is_some() {
                        for id in self.operand_barrier_ids().chain([OUT_OF_RANGE_BARRIER_ID]) {
                            if !out.contains(&id) {
                                out.push(id);
                            }
                        }
                    }
                }
                StmtKind::If { then, els, .. } => {
                    self.predefined_ids(then, out);
                    self.predefined_ids(els, out);
                }
                StmtKind::Repeat { body, .. } | StmtKind::While { body, .. } => self.predefined_ids(body, out),
                _ => {}
            }
        }
    }

    /// Lowers a target instruction through the model's data.
    fn model_instr(
        &mut self,
        c: &mut CodeBuilder,
        ins: &bc_models::Instruction,
        dest: Option<&Ident>,
        name: &Ident,
        args: &[Arg],
        names: &Names,
    ) -> Option<Vec<InstrKind>> {
        let n = &ins.name;
        let (min, max) = (ins.operands.len() - ins.optional, ins.operands.len());
        if args.len() < min || args.len() > max {
            let want = if min == max {
                min.to_string()
            } else {
                format!("{min} to {max}")
            };
            let span = args.last().map_or(name.span, |a| name.span.to(a.span()));
            self.err(span, format!("`{n}` takes {want} operand(s), found {}", args.len()));
            return None;
        }
        if let (Some(d), false) = (dest, ins.result) {
            self.err(d.span, format!("`{n}` returns no value"));
            return None;
        }
        let mut exprs = Vec::new();
        for a in args {
            match a {
                Arg::Expr(e) => exprs.push(e),
                Arg::List(_, span) => {
                    self.err(*span, format!("`{n}` takes no location list `[...]`"));
                    return None;
                }
                Arg::Key(k, _) => {
                    self.err(k.span, format!("`{n}` takes no `{}=` operand", k.name));
                    return None;
                }
            }
        }
        // Barrier operands are constant ids of the model's barriers; object
        // operands name declared barriers; register operands name registers.
        let mut barrier_decl = vec![None; exprs.len()];
        let mut object_decl = vec![None; exprs.len()];
        let mut regs = vec![None; exprs.len()];
        for (i, kind) in ins.operands.iter().enumerate().take(exprs.len()) {
            let name_of = |e: &Expr| match &e.kind {
                ExprKind::Name(n) => Some(n.clone()),
                _ => None,
            };
            match kind {
                OperandKind::Object => {
                    match name_of(exprs[i]).and_then(|f| names.barriers.iter().position(|b| *b == f)) {
                        Some(d) => object_decl[i] = Some(d as u32),
                        None => {
                            let found = self.snippet(exprs[i].span).to_string();
                            let hint = names.suggest(&found, true);
                            self.err(
                                exprs[i].span,
                                format!("`{n}` needs a declared barrier, found `{found}`{hint}"),
                            );
                            return None;
                        }
                    }
                    continue;
                }
                OperandKind::Reg => {
                    match name_of(exprs[i]).filter(|t| {
                        !names.barriers.contains(&t.as_str())
                            && names.var_pos(t).is_none()
                            && !BUILTINS.iter().any(|(b, _)| b == t)
                    }) {
                        Some(r) => regs[i] = Some(c.read(&r, exprs[i].span)),
                        None => {
                            self.err(exprs[i].span, format!("`{n}` needs a register here"));
                            return None;
                        }
                    }
                    continue;
                }
                OperandKind::Int => continue,
                OperandKind::Barrier => {}
            }
            let ExprKind::Int(id) = exprs[i].kind else {
                self.err(
                    exprs[i].span,
                    format!(
                        "`{n}` needs a constant barrier id, found `{}`",
                        self.snippet(exprs[i].span)
                    ),
                );
                return None;
            };
            let addressable = self.model.barrier(id).is_some_and(|b| b.operand) || id == OUT_OF_RANGE_BARRIER_ID;
            match names.predefined.iter().find(|(x, _)| *x == id).filter(|_| addressable) {
                Some(&(_, d)) => barrier_decl[i] = Some((id, d)),
                None => {
                    let hint = which("it is in", bc_models::models_with_barrier(id));
                    self.err(
                        exprs[i].span,
                        format!("barrier id {id} is not a barrier of model `{}`{hint}", self.model.name),
                    );
                    return None;
                }
            }
        }
        let dest = dest.map(|d| self.dest_reg(c, d, names));
        // A lane mask (`__syncwarp MASK`) selects the barrier of the
        // thread's warp and mask: a new declaration for this site. The mask
        // must be known from the thread's place alone.
        let mask_site = match masked(ins) {
            Some((id, i, tile)) => {
                let e = exprs.get(i)?;
                let mask = if tile {
                    self.tile_mask(e, n)?
                } else {
                    self.expr(c, e, names, false)
                };
                if mask.reads_state() {
                    self.err(
                        e.span,
                        format!(
                            "unsupported: the mask of `{n}` must be a constant expression of builtins (lane, tid, warp, bid, ntid); a mask held in a register is not modelled"
                        ),
                    );
                    return None;
                }
                self.mask_sites.push(MaskSite { id, mask: mask.clone() });
                Some((id, self.first_mask_decl + self.mask_sites.len() as u32 - 1, mask))
            }
            None => None,
        };
        // A warp intrinsic's arrive gives its value for its wait's form.
        let per_lane = ins.lowering.iter().find_map(|l| l.reduce.filter(|r| r.per_lane()));
        let mut out = Vec::new();
        for l in &ins.lowering {
            let sel = match l.barrier {
                BarrierRef::Id(id) if mask_site.as_ref().is_some_and(|(m, ..)| *m == id) => {
                    BarrierSel::Decl(mask_site.as_ref().map_or(0, |(_, d, _)| *d))
                }
                BarrierRef::Operand(i) => {
                    let (id, decl) = barrier_decl[i].expect("barrier operands were resolved");
                    let group = self
                        .model
                        .groups
                        .iter()
                        .position(|g| g.wait_on_joined && g.ids.contains(&id));
                    match (l.op, group) {
                        (AbstractOp::Wait, Some(g)) => BarrierSel::JoinedOr { group: g as u32, decl },
                        _ => BarrierSel::Decl(decl),
                    }
                }
                BarrierRef::Id(id) => match names.predefined.iter().find(|(x, _)| *x == id) {
                    Some(&(_, d)) => BarrierSel::Decl(d),
                    None => unreachable!("fixed ids are collected before lowering"),
                },
                BarrierRef::JoinedInGroup(g) => BarrierSel::Joined { group: g as u32 },
                BarrierRef::Object(i) => BarrierSel::Decl(object_decl[i].expect("object operands were resolved")),
            };
            let mut operand =
                |i: Option<usize>, this: &mut Self| i.and_then(|i| exprs.get(i)).map(|e| this.expr(c, e, names, false));
            let count = operand(l.count, self);
            let op = match l.op {
                AbstractOp::Init => BarrierOp::Init(count.unwrap_or(CExpr::Int(0))),
                AbstractOp::Join => BarrierOp::Join,
                AbstractOp::Drop => BarrierOp::Drop,
                AbstractOp::ArriveDrop => BarrierOp::ArriveDrop { positive: l.positive },
                AbstractOp::Arrive => BarrierOp::Arrive(ArriveSpec {
                    set_count: count,
                    count_match: l.count_match,
                    mask: match l.tile {
                        Some(_) => mask_site.as_ref().map(|(.., m)| m.clone()),
                        None => operand(l.mask, self),
                    },
                    pred: operand(l.pred, self),
                    value: operand(l.value, self).map(|v| (v, per_lane.unwrap_or(bc_models::Reduce::Popc))),
                    object: l.object,
                    collective: l.collective,
                    tx: operand(l.tx, self),
                    arrivals: operand(l.arrivals, self),
                    aligned: l.aligned,
                    relaxed: l.relaxed,
                }),
                AbstractOp::Wait => BarrierOp::Wait(WaitSpec {
                    token: l.token.and_then(|i| regs[i]),
                    parity: operand(l.parity, self),
                    reduce: l.reduce,
                    lane: operand(l.lane, self),
                    width: operand(l.width, self),
                    poll: l.poll || (l.poll_with_result && dest.is_some()),
                    aligned: l.aligned,
                }),
                AbstractOp::ExpectTx => BarrierOp::ExpectTx(count.unwrap_or(CExpr::Int(0))),
                AbstractOp::CompleteTx => BarrierOp::CompleteTx(count.unwrap_or(CExpr::Int(0))),
                AbstractOp::Inval => BarrierOp::Inval,
            };
            let result = match (dest, l.isfirst, l.token_result, l.reduce) {
                (Some(r), true, _, _) => Some(BarrierResult::IsFirst(r)),
                (Some(r), _, true, _) => Some(BarrierResult::Token(r)),
                (Some(r), _, _, Some(_)) => Some(BarrierResult::Reduce(r)),
                (Some(r), _, _, None) if (l.poll || l.poll_with_result) && l.op == AbstractOp::Wait => {
                    Some(BarrierResult::Poll(r))
                }
                _ => None,
            };
            out.push(InstrKind::Barrier { op, sel, result });
        }
        Some(out)
    }

    /// The lane mask of the caller's tile for a tile size operand `e`
    /// (cooperative groups, `tiled_partition<N>`: a thread block tile of N
    /// threads, N a power of two no larger than the warp, holds the N
    /// consecutive lanes from `lane / N * N`, and its `sync` is a
    /// `__syncwarp` over them): `((1 << N) - 1) << (lane / N * N)`.
    fn tile_mask(&mut self, e: &Expr, n: &str) -> Option<CExpr> {
        let warp = i64::from(self.model.warp_size);
        let size = match e.kind {
            ExprKind::Int(v) if v >= 1 && v <= warp && (v & (v - 1)) == 0 => v,
            _ => {
                self.err(
                    e.span,
                    format!(
                        "`{n}` needs a constant tile size, a power of two from 1 to {warp}, found `{}`",
                        self.snippet(e.span)
                    ),
                );
                return None;
            }
        };
        let int = |v: i64| Box::new(CExpr::Int(v));
        let lanes = CExpr::Binary(Op::Sub, Box::new(CExpr::Binary(Op::Shl, int(1), int(size))), int(1));
        let first = CExpr::Binary(
            Op::Mul,
            Box::new(CExpr::Binary(
                Op::Div,
                Box::new(CExpr::Builtin(Builtin::Lane)),
                int(size),
            )),
            int(size),
        );
        Some(CExpr::Binary(Op::Shl, Box::new(lanes), Box::new(first)))
    }

    fn dest_reg(&mut self, c: &mut CodeBuilder, dest: &Ident, names: &Names) -> RegId {
        if dest.name.contains('.') {
            self.err(
                dest.span,
                format!(
                    "`{}` is not a register: a name with a dot is an instruction, never a register",
                    dest.name
                ),
            );
        } else if BUILTINS.iter().any(|(b, _)| *b == dest.name)
            || names.barriers.contains(&dest.name.as_str())
            || names.var_pos(&dest.name).is_some()
        {
            self.err(
                dest.span,
                format!(
                    "`{}` is not a register (registers are names that are not builtins, barriers or locations)",
                    dest.name
                ),
            );
        }
        c.write(&dest.name)
    }

    /// `cp.async.bulk DST, SRC, BYTES` (PTX ISA, `cp.async.bulk` with
    /// `.bulk_group`, as a TMA store is): a bulk copy whose completion only
    /// the issuer's bulk async-group waits observe (see
    /// [`crate::program::CopySite::BulkGroup`]).
    ///
    /// `cp.async.bulk DST, SRC, BYTES, B` (PTX ISA, `cp.async.bulk` with
    /// `.mbarrier::complete_tx::bytes`, operands in its order; the CUDA
    /// guide, "Using TMA to transfer one-dimensional arrays"): a copy of
    /// location SRC into location DST whose completion, at a point of its
    /// own, completes BYTES transactions on mbarrier B, with the write to
    /// DST before it. The issuing thread goes on at once. See
    /// [`crate::copies::add_copy_agents`] for how the copy runs.
    ///
    /// `memcpy_async DST, SRC, BYTES, B` (`cuda::memcpy_async` with a
    /// barrier; the guide, "Asynchronous Data Copies using cuda::barrier":
    /// the copy acts as another thread bound to the barrier, raising the
    /// current phase's expected count when it is issued and lowering it
    /// when it completes): the issue adds one transaction to B's current
    /// phase, which the copy completes, so the phase cannot complete
    /// before the copy (the same as one more expected arrival for that
    /// phase alone).
    ///
    /// `cp.async DST, SRC[, BYTES]` (PTX ISA, `cp.async`; also
    /// `pipeline.memcpy_async`, which libcudacxx issues as one `cp.async`
    /// on sm_80): a copy whose completion only an async-group wait of the
    /// issuer (`cp.async.wait_group`, `cp.async.wait_all`) or a
    /// `cp.async.mbarrier.arrive` observes. `cp.async.mbarrier.arrive[.noinc]
    /// B` (PTX ISA, `cp.async.mbarrier.arrive`): an arrive on mbarrier B
    /// performed once every `cp.async` the thread issued before it has
    /// completed; without `.noinc` the issue also raises the current
    /// phase's pending count by one, so the phase waits for the copies and
    /// the thread's own arrivals count as before.
    fn copy_instr(
        &mut self,
        c: &mut CodeBuilder,
        s: &Stmt,
        dest: Option<&Ident>,
        name: &Ident,
        args: &[Arg],
        names: &Names,
    ) -> Option<Vec<InstrKind>> {
        use crate::copies::{SiteKind, SiteSpec};
        let n = name.name.as_str();
        if !self.device_statement_without_result(dest, name) {
            return None;
        }
        let arrive = n.starts_with("cp.async.mbarrier.arrive");
        let plain = matches!(n, "cp.async" | "pipeline.memcpy_async");
        // `cp.async.bulk` without a barrier: completion through the bulk
        // async-groups.
        let grouped = n == "cp.async.bulk" && args.len() == 3;
        let (arity, what): (&[usize], &str) = if arrive {
            (&[1], "1 operand (the barrier)")
        } else if plain {
            (&[2, 3], "2 or 3 operands (destination, source, optionally bytes)")
        } else if n == "cp.async.bulk" {
            (
                &[3, 4],
                "3 operands (destination, source, bytes: a bulk async-group copy) or 4 (and the mbarrier it completes on)",
            )
        } else {
            (&[4], "4 operands (destination, source, bytes, barrier)")
        };
        if !arity.contains(&args.len()) {
            let span = args.last().map_or(name.span, |a| name.span.to(a.span()));
            self.err(span, format!("`{n}` takes {what}, found {}", args.len()));
            return None;
        }
        // Operands 0 and 1 of a copy are its destination and source: a
        // location, or a list of them (`[a, b]`, a copy of several
        // locations; the source list may be empty: a copy that reads
        // nothing, PTX's `src-size` 0). Every other operand is a value.
        let mut exprs: Vec<&Expr> = Vec::new();
        let mut lists: [Option<&[Expr]>; 2] = [None, None];
        // What stands in `exprs` at a list's position (never read there).
        let placeholders: Vec<Expr> = (args.iter())
            .map(|a| Expr {
                kind: ExprKind::Int(0),
                span: a.span(),
            })
            .collect();
        for (i, a) in args.iter().enumerate() {
            match a {
                Arg::Expr(e) => exprs.push(e),
                Arg::List(items, span) if i < 2 && !arrive => {
                    if i == 0 && items.is_empty() {
                        self.err(*span, format!("`{n}` needs at least one destination location"));
                        return None;
                    }
                    lists[i] = Some(items);
                    exprs.push(&placeholders[i]);
                }
                Arg::List(_, span) => {
                    self.err(
                        *span,
                        format!("`{n}` takes a location list `[...]` only as its destination or source"),
                    );
                    return None;
                }
                Arg::Key(k, _) => {
                    self.err(k.span, format!("`{n}` takes no `{}=` operand", k.name));
                    return None;
                }
            }
        }
        let name_of = |e: &Expr| match &e.kind {
            ExprKind::Name(x) => Some(x.clone()),
            _ => None,
        };
        let mut locs: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
        let mut ok = true;
        if !arrive {
            for (i, what) in ["destination", "source"].iter().enumerate() {
                let items: &[Expr] = match lists[i] {
                    Some(l) => l,
                    None => std::slice::from_ref(exprs[i]),
                };
                for e in items {
                    match name_of(e).and_then(|f| names.var_pos(&f)) {
                        Some(d) if !locs[i].contains(&(d as u32)) => locs[i].push(d as u32),
                        Some(_) => {
                            let found = self.snippet(e.span).to_string();
                            self.err(e.span, format!("`{found}` is named twice in the copy's {what}"));
                            ok = false;
                        }
                        None => {
                            let found = self.snippet(e.span).to_string();
                            let hint = names.suggest(&found, false);
                            self.err(
                                e.span,
                                format!("`{n}` needs a declared location (`var`) as its {what}, found `{found}`{hint}"),
                            );
                            ok = false;
                        }
                    }
                }
            }
        }
        let barrier_at = if arrive {
            Some(0)
        } else if plain || grouped {
            None
        } else {
            Some(3)
        };
        let mut barrier = None;
        if let Some(i) = barrier_at {
            barrier = name_of(exprs[i]).and_then(|f| names.barriers.iter().position(|b| *b == f));
            if barrier.is_none() {
                let found = self.snippet(exprs[i].span).to_string();
                let hint = names.suggest(&found, true);
                self.err(
                    exprs[i].span,
                    format!("`{n}` needs a declared barrier, found `{found}`{hint}"),
                );
                ok = false;
            }
        }
        if !ok {
            return None;
        }
        let bytes = match (arrive, exprs.get(2)) {
            (false, Some(e)) => self.expr(c, e, names, false),
            _ => CExpr::Int(0),
        };
        let text = self
            .text
            .get(s.span.start as usize..s.span.end as usize)
            .unwrap_or(n)
            .to_string();
        let barrier = barrier.map(|b| b as u32);
        let kind = if arrive {
            SiteKind::Arrive {
                noinc: n.ends_with(".noinc"),
            }
        } else if plain {
            SiteKind::Plain
        } else if grouped {
            SiteKind::BulkGroup
        } else {
            SiteKind::Bulk {
                holds: n == "memcpy_async",
            }
        };
        let hold = match kind {
            SiteKind::Bulk { holds: true } | SiteKind::Arrive { noinc: false } => barrier,
            _ => None,
        };
        let [dst, src] = locs;
        self.copy_sites.push(SiteSpec {
            dst,
            src,
            barrier,
            kind,
            span: s.span,
            text,
        });
        Some(vec![InstrKind::CopyIssue {
            site: self.copy_sites.len() as u32 - 1,
            bytes,
            hold,
            age: None,
        }])
    }

    /// A copy or async-group statement runs on a device thread and returns
    /// nothing: whether `name` (with `dest`, its result register if any)
    /// is used so, with an error where it is not.
    fn device_statement_without_result(&mut self, dest: Option<&Ident>, name: &Ident) -> bool {
        let n = name.name.as_str();
        if self.form == ThreadForm::Host {
            self.err(
                name.span,
                format!("`{n}` is a device operation: a host thread cannot run it"),
            );
            return false;
        }
        if let Some(d) = dest {
            self.err(d.span, format!("`{n}` returns no value"));
            return false;
        }
        true
    }

    /// The async-group statements (PTX ISA, `cp.async.commit_group`,
    /// `cp.async.wait_group`, `cp.async.wait_all`; libcudacxx
    /// `pipeline<thread_scope_thread>`): a marker, expanded once every
    /// copy site is known ([`crate::copies`]).
    fn async_group_instr(&mut self, dest: Option<&Ident>, name: &Ident, args: &[Arg]) -> Option<Vec<InstrKind>> {
        let n = name.name.as_str();
        if !self.device_statement_without_result(dest, name) {
            return None;
        }
        let op = match n {
            "cp.async.commit_group" => AsyncGroupOp::Commit,
            "cp.async.bulk.commit_group" => AsyncGroupOp::BulkCommit,
            "cp.async.wait_all" => AsyncGroupOp::WaitAll,
            "pipeline.producer_acquire" => AsyncGroupOp::PipelineAcquire,
            "pipeline.producer_commit" => AsyncGroupOp::PipelineCommit,
            "pipeline.consumer_wait" => AsyncGroupOp::PipelineWait,
            "pipeline.consumer_release" => AsyncGroupOp::PipelineRelease,
            _ => {
                // `cp.async.wait_group N`: N an integer constant (PTX: an
                // immediate).
                let found = args.len();
                let value = match args {
                    [Arg::Expr(Expr {
                        kind: ExprKind::Int(v), ..
                    })] => u32::try_from(*v).ok(),
                    _ => None,
                };
                let Some(v) = value else {
                    let span = args.first().map_or(name.span, |a| a.span());
                    self.err(
                        span,
                        format!("`{n}` takes one operand, a non-negative integer constant (found {found} operand(s))"),
                    );
                    return None;
                };
                let op = match n {
                    "cp.async.bulk.wait_group" => AsyncGroupOp::BulkWait(v),
                    "cp.async.bulk.wait_group.read" => AsyncGroupOp::BulkWaitRead(v),
                    _ => AsyncGroupOp::Wait(v),
                };
                return Some(vec![InstrKind::AsyncGroup { op, len: 0 }]);
            }
        };
        if let Some(a) = args.first() {
            self.err(a.span(), format!("`{n}` takes no operand"));
            return None;
        }
        Some(vec![InstrKind::AsyncGroup { op, len: 0 }])
    }

    /// Lowers one instruction statement; `None` after an error.
    fn instr(
        &mut self,
        c: &mut CodeBuilder,
        s: &Stmt,
        dest: Option<&Ident>,
        name: &Ident,
        args: &[Arg],
        names: &Names,
    ) -> Option<Vec<InstrKind>> {
        let n = name.name.as_str();
        if !bc_syntax::kinds::is_instruction(n) {
            self.unknown_instruction(name.span, n);
            return None;
        }
        if !self.require(name.span, n) {
            return None;
        }
        let copy = matches!(
            n,
            "cp.async.bulk" | "memcpy_async" | "cp.async" | "pipeline.memcpy_async"
        );
        if let (Some(Arg::List(_, span)), false) = (args.iter().find(|a| matches!(a, Arg::List(..))), copy) {
            self.err(
                *span,
                format!("`{n}` takes no location list `[...]`: only a copy's destination and source are lists"),
            );
            return None;
        }
        if let Some(ins) = self.model.instruction(n) {
            return self.model_instr(c, ins, dest, name, args, names);
        }
        if matches!(n, "launch" | "device_sync" | "stream_query") {
            return self.host_instr(c, dest, name, args, names);
        }
        if matches!(
            n,
            "cp.async.bulk"
                | "memcpy_async"
                | "cp.async"
                | "pipeline.memcpy_async"
                | "cp.async.mbarrier.arrive"
                | "cp.async.mbarrier.arrive.noinc"
        ) {
            return self.copy_instr(c, s, dest, name, args, names);
        }
        if n.starts_with("cp.async.") && (n.contains("group") || n.ends_with("wait_all")) || n.starts_with("pipeline.")
        {
            return self.async_group_instr(dest, name, args);
        }
        if let Some(scope) = fence_scope(n).map(Some).or((n == "coalesced.sync").then_some(None)) {
            if self.form == ThreadForm::Host {
                self.err(
                    name.span,
                    format!("`{n}` is a device statement: a host thread cannot run it"),
                );
                return None;
            }
            if let Some(a) = args.first() {
                self.err(a.span(), format!("`{n}` takes no operand"));
                return None;
            }
            if let Some(d) = dest {
                self.err(d.span, format!("`{n}` returns no value"));
                return None;
            }
            return Some(vec![scope.map_or(InstrKind::CoalescedSync, InstrKind::Fence)]);
        }
        // (arity, returns a value, first operand: b = barrier, l = location)
        let (arity, returns, first): (&[usize], bool, char) = match n {
            "init" => (&[2], false, 'b'),
            "join" | "drop" | "arrive_wait" | "arrive_drop" => (&[1], false, 'b'),
            "arrive" => (&[1, 2], true, 'b'),
            "wait" => (&[1, 2], false, 'b'),
            "store" | "exch" | "fetch_add" => (&[2], n != "store", 'l'),
            "load" => (&[1], true, 'l'),
            "read" | "write" => (&[1], false, 'l'),
            "cas" => (&[3], true, 'l'),
            _ => {
                self.err(
                    name.span,
                    format!(
                        "`{n}` is not implemented in this build (model `{}` lists it)",
                        self.model.name
                    ),
                );
                return None;
            }
        };
        if !arity.contains(&args.len()) {
            let want: Vec<String> = arity.iter().map(|a| a.to_string()).collect();
            let span = args.last().map_or(name.span, |a| name.span.to(a.span()));
            self.err(
                span,
                format!("`{n}` takes {} operand(s), found {}", want.join(" or "), args.len()),
            );
            return None;
        }
        if let (Some(d), false) = (dest, returns) {
            self.err(d.span, format!("`{n}` returns no value"));
            return None;
        }
        let exprs: Vec<&Expr> = args
            .iter()
            .filter_map(|a| match a {
                Arg::Expr(e) => Some(e),
                Arg::List(_, span) => {
                    self.err(*span, format!("`{n}` takes no location list `[...]`"));
                    None
                }
                Arg::Key(k, _) => {
                    self.err(k.span, format!("`{n}` takes no `{}=` operand", k.name));
                    None
                }
            })
            .collect();
        if exprs.len() != args.len() {
            return None;
        }
        let operand_name = |e: &Expr| match &e.kind {
            ExprKind::Name(n) => Some(n.clone()),
            _ => None,
        };
        let first_name = operand_name(exprs[0]);
        let what = match first {
            'b' => "a declared barrier",
            _ => "a declared location (`var`)",
        };
        let Some(decl) = first_name.as_deref().and_then(|f| match first {
            'b' => names.barriers.iter().position(|b| *b == f),
            _ => names.var_pos(f),
        }) else {
            let found = self.snippet(exprs[0].span).to_string();
            let hint = names.suggest(&found, first == 'b');
            self.err(exprs[0].span, format!("`{n}` needs {what}, found `{found}`{hint}"));
            return None;
        };
        let decl = decl as u32;
        let dest = dest.map(|d| self.dest_reg(c, d, names));
        let mut ex = |i: usize, this: &mut Self| this.expr(c, exprs[i], names, false);
        let kind = match n {
            "init" => InstrKind::Barrier {
                op: BarrierOp::Init(ex(1, self)),
                sel: BarrierSel::Decl(decl),
                result: None,
            },
            "join" => InstrKind::Barrier {
                op: BarrierOp::Join,
                sel: BarrierSel::Decl(decl),
                result: None,
            },
            "drop" => InstrKind::Barrier {
                op: BarrierOp::Drop,
                sel: BarrierSel::Decl(decl),
                result: None,
            },
            "arrive_drop" => InstrKind::Barrier {
                op: BarrierOp::ArriveDrop { positive: false },
                sel: BarrierSel::Decl(decl),
                result: None,
            },
            "arrive" => {
                let count = if exprs.len() == 2 { Some(ex(1, self)) } else { None };
                InstrKind::Barrier {
                    op: BarrierOp::Arrive(ArriveSpec {
                        set_count: count,
                        object: true,
                        ..ArriveSpec::default()
                    }),
                    sel: BarrierSel::Decl(decl),
                    result: dest.map(BarrierResult::Token),
                }
            }
            "wait" => {
                let token = if exprs.len() == 2 {
                    match operand_name(exprs[1]) {
                        Some(t)
                            if !names.barriers.contains(&t.as_str())
                                && names.var_pos(&t).is_none()
                                && !BUILTINS.iter().any(|(b, _)| *b == t) =>
                        {
                            Some(c.read(&t, exprs[1].span))
                        }
                        _ => {
                            self.err(exprs[1].span, "the token of `wait B, t` must be a register");
                            return None;
                        }
                    }
                } else {
                    None
                };
                InstrKind::Barrier {
                    op: BarrierOp::Wait(WaitSpec {
                        token,
                        ..WaitSpec::default()
                    }),
                    sel: BarrierSel::Decl(decl),
                    result: None,
                }
            }
            "arrive_wait" => {
                let token = c.write(&format!("token@{}", s.span.start));
                return Some(vec![
                    InstrKind::Barrier {
                        op: BarrierOp::Arrive(ArriveSpec {
                            object: true,
                            ..ArriveSpec::default()
                        }),
                        sel: BarrierSel::Decl(decl),
                        result: Some(BarrierResult::Token(token)),
                    },
                    InstrKind::Barrier {
                        op: BarrierOp::Wait(WaitSpec {
                            token: Some(token),
                            ..WaitSpec::default()
                        }),
                        sel: BarrierSel::Decl(decl),
                        result: None,
                    },
                ]);
            }
            "store" => InstrKind::Store {
                decl,
                value: ex(1, self),
            },
            "load" => InstrKind::Load { decl, dest },
            "read" => InstrKind::Read { decl },
            "write" => InstrKind::Write { decl },
            "exch" => InstrKind::Rmw {
                rmw: Rmw::Exch,
                decl,
                value: ex(1, self),
                dest,
            },
            "fetch_add" => InstrKind::Rmw {
                rmw: Rmw::FetchAdd,
                decl,
                value: ex(1, self),
                dest,
            },
            "cas" => {
                let expected = ex(1, self);
                let new = ex(2, self);
                InstrKind::Cas {
                    decl,
                    expected,
                    new,
                    dest,
                }
            }
            _ => unreachable!("arity table covers every lowered statement"),
        };
        Some(vec![kind])
    }

    fn snippet(&self, span: Span) -> &str {
        self.text.get(span.start as usize..span.end as usize).unwrap_or("?")
    }

    fn expr(&mut self, c: &mut CodeBuilder, e: &Expr, names: &Names, locations: bool) -> CExpr {
        match &e.kind {
            ExprKind::Int(v) => CExpr::Int(*v),
            ExprKind::Name(n) => {
                if let Some((_, b)) = BUILTINS.iter().find(|(b, _)| b == n) {
                    CExpr::Builtin(*b)
                } else if let Some(d) = names.var_pos(n) {
                    if !locations {
                        self.err(
                            e.span,
                            format!("location `{n}` can only be read with `r = load {n}` (or in `await`)"),
                        );
                    }
                    CExpr::Loc(d as u32)
                } else if names.barriers.contains(&n.as_str()) {
                    self.err(e.span, format!("barrier `{n}` is not a value"));
                    CExpr::Int(0)
                } else if n.contains('.') {
                    // A dotted name is never a register.
                    if !bc_syntax::kinds::is_instruction(n) {
                        self.unknown_instruction(e.span, n);
                    } else if self.require(e.span, n) {
                        self.err(
                            e.span,
                            format!("instruction `{n}` is not a value; write it as its own statement (`r = {n} ...`)"),
                        );
                    }
                    CExpr::Int(0)
                } else {
                    CExpr::Reg(c.read(n, e.span))
                }
            }
            ExprKind::Qualified(t, _) => {
                self.err(t.span, "`THREAD:reg` is only allowed in `assert`");
                CExpr::Int(0)
            }
            ExprKind::Index(base, _) => {
                self.err(
                    e.span,
                    format!(
                        "`{}[...]` is not a value: an indexed barrier is only an operand of a barrier instruction",
                        base.name
                    ),
                );
                CExpr::Int(0)
            }
            ExprKind::Unary(op, x) => CExpr::Unary(*op, Box::new(self.expr(c, x, names, locations))),
            ExprKind::Binary(op, a, b) => {
                let a = self.expr(c, a, names, locations);
                let b = self.expr(c, b, names, locations);
                CExpr::Binary(*op, Box::new(a), Box::new(b))
            }
        }
    }

    fn assert_expr(
        &mut self,
        e: &Expr,
        threads: &[ThreadInfo],
        codes: &[Code],
        names: &Names,
        loc_insts: &[Vec<LocId>],
    ) -> Option<CExpr> {
        Some(match &e.kind {
            ExprKind::Int(v) => CExpr::Int(*v),
            ExprKind::Qualified(t, r) => {
                let Some(tid) = threads.iter().position(|x| x.name == t.name) else {
                    let hint = bc_syntax::kinds::closest(&t.name, threads.iter().map(|x| x.name.as_str()))
                        .map_or(String::new(), |k| format!(" (did you mean `{k}`?)"));
                    self.err(t.span, format!("unknown thread `{}`{hint}", t.name));
                    return None;
                };
                let code = &codes[threads[tid].code.index()];
                let Some(reg) = code.reg(&r.name) else {
                    let hint = bc_syntax::kinds::closest(&r.name, code.regs.iter().map(String::as_str))
                        .map_or(String::new(), |k| format!(" (did you mean `{k}`?)"));
                    self.err(
                        r.span,
                        format!("thread `{}` has no register `{}`{hint}", t.name, r.name),
                    );
                    return None;
                };
                CExpr::ThreadReg(ThreadId(tid as u32), reg)
            }
            ExprKind::Name(n) => match names.var_pos(n) {
                Some(d) if loc_insts[d].len() == 1 => CExpr::LocInst(loc_insts[d][0]),
                Some(_) => {
                    self.err(e.span, format!("location `{n}` has one instance per scope instance; assertions can only name device-wide locations"));
                    return None;
                }
                None => {
                    self.err(
                        e.span,
                        format!("`{n}` is not a location; name registers as `THREAD:{n}`"),
                    );
                    return None;
                }
            },
            ExprKind::Index(..) => {
                self.err(e.span, "an indexed barrier is not a value in an assertion");
                return None;
            }
            ExprKind::Unary(op, x) => {
                CExpr::Unary(*op, Box::new(self.assert_expr(x, threads, codes, names, loc_insts)?))
            }
            ExprKind::Binary(op, a, b) => {
                let a = self.assert_expr(a, threads, codes, names, loc_insts);
                let b = self.assert_expr(b, threads, codes, names, loc_insts);
                CExpr::Binary(*op, Box::new(a?), Box::new(b?))
            }
        })
    }
}

/// The fixed barrier id and the mask operand of an instruction whose
/// lowering carries a lane mask (`__syncwarp`), if it has one.
/// The scope of a fence statement (PTX ISA, `membar`/`fence`; the CUDA
/// barrier builtins lowering notes: `__threadfence_block`, `__threadfence`
/// and `__threadfence_system` are `membar.cta`, `.gl` and `.sys`).
/// Instruction statement `s` with its operand `at` replaced by `kind`
/// (at that operand's span): one choice of a run-time operand.
fn with_operand(s: &Stmt, at: usize, kind: ExprKind) -> Stmt {
    let StmtKind::Instr { dest, name, args } = &s.kind else {
        unreachable!("an instruction statement")
    };
    let mut args = args.clone();
    let span = args[at].span();
    args[at] = Arg::Expr(Expr { kind, span });
    Stmt {
        labels: Vec::new(),
        kind: StmtKind::Instr {
            dest: dest.clone(),
            name: name.clone(),
            args,
        },
        span: s.span,
    }
}

/// `if sel == v0 { s0 } else if sel == v1 { s1 } ... else { last }` for the
/// `cases` `(v, s)` in order: a run-time operand as the statement of its
/// value, `last` for a value no case names.
fn if_chain(sel: &Expr, cases: Vec<(i64, Stmt)>, last: Stmt, span: Span) -> Stmt {
    cases.into_iter().rev().fold(last, |els, (v, then)| {
        let value = Expr {
            kind: ExprKind::Int(v),
            span: sel.span,
        };
        let cond = Expr {
            kind: ExprKind::Binary(Op::Eq, Box::new(sel.clone()), Box::new(value)),
            span: sel.span,
        };
        Stmt {
            labels: Vec::new(),
            kind: StmtKind::If {
                cond,
                then: vec![then],
                els: vec![els],
            },
            span,
        }
    })
}

fn fence_scope(n: &str) -> Option<crate::program::FenceScope> {
    use crate::program::FenceScope::*;
    Some(match n {
        "membar.cta" | "fence.acq_rel.cta" | "fence.sc.cta" | "__threadfence_block" => Cta,
        "fence.acq_rel.cluster" | "fence.sc.cluster" => Cluster,
        "membar.gl" | "fence.acq_rel.gpu" | "fence.sc.gpu" | "__threadfence" => Gpu,
        "membar.sys" | "fence.acq_rel.sys" | "fence.sc.sys" | "__threadfence_system" => Sys,
        "fence.proxy.async" => ProxyAsync,
        "fence.mbarrier_init" => MbarrierInit,
        _ => return None,
    })
}

/// The barrier id and operand of an instruction's lane mask, and whether
/// the operand is a tile size (`tile=`) rather than the mask itself.
fn masked(ins: &bc_models::Instruction) -> Option<(i64, usize, bool)> {
    ins.lowering.iter().find_map(|l| match (l.barrier, l.mask, l.tile) {
        (BarrierRef::Id(id), Some(m), _) => Some((id, m, false)),
        (BarrierRef::Id(id), None, Some(n)) => Some((id, n, true)),
        _ => None,
    })
}

/// ` (PREFIX m1, m2)` naming the models that have something, or nothing.
fn which(prefix: &str, models: Vec<String>) -> String {
    if models.is_empty() {
        String::new()
    } else {
        format!(" ({prefix} {})", models.join(", "))
    }
}

struct Names<'a> {
    barriers: Vec<&'a str>,
    /// The barrier arrays, whose elements are among `barriers`.
    arrays: Vec<BarrierArray>,
    /// Each location name's first declaration, for lookups that stay
    /// linear in the program (the PTX front end declares a location per
    /// word a kernel touches: thousands).
    var_ix: HashMap<&'a str, usize>,
    /// Named kernels, in declaration order.
    kernels: Vec<String>,
    /// Predefined barrier id -> declaration index (for those the test uses).
    predefined: Vec<(i64, u32)>,
}

impl Names<'_> {
    /// The declaration index of location `n`, if one is declared.
    fn var_pos(&self, n: &str) -> Option<usize> {
        self.var_ix.get(n).copied()
    }

    /// ` (did you mean `X`?)` for the declared barrier (or location) whose
    /// name is nearest to `found`, when one is close enough.
    fn suggest(&self, found: &str, barrier: bool) -> String {
        let near = if barrier {
            bc_syntax::kinds::closest(found, self.barriers.iter().map(|b| &**b))
        } else {
            bc_syntax::kinds::closest(found, self.var_ix.keys().copied().collect::<BTreeSet<_>>())
        };
        near.map(|k| format!(" (did you mean `{k}`?)")).unwrap_or_default()
    }
}

/// The most elements of one barrier array.
const MAX_ARRAY: i64 = 64;

/// Caps on what lowering builds before any search budget exists (issue 33,
/// point 8): declarations multiply by the threads and by the instances of
/// their scope, so a 2 KB file (100 block-scope arrays of 64 in 4,096
/// blocks: 26 million instances) asked for gigabytes and aborted. Past a
/// cap the input is an error at the declaration that passes it. The caps
/// are far above what a search can explore (1 MiB of plain declarations is
/// about 70,000 barriers), and the largest shapes the project measures
/// (64 block barriers in 4,096 blocks: 266,240 instances) stay below them.
/// Barrier declarations, arrays expanded (an array of N is N + 1).
const MAX_BARRIER_DECLS: usize = 1 << 18;
/// Barrier and location instances.
const MAX_INSTANCES: u64 = 1 << 20;
/// Entries of the threads' declaration tables (threads times declarations).
const MAX_THREAD_ENTRIES: u64 = 1 << 23;

/// A `barrier` line of the file, or one element of an array line.
struct ExpandedBarrier {
    name: String,
    scope: Scope,
    count: Option<i64>,
    span: Span,
    out_of_range: bool,
}

/// `barrier NAME[len]`: its elements are the declarations `first ..
/// first + len`, and `first + len` is the hidden out-of-range one.
#[derive(Clone, Debug)]
struct BarrierArray {
    name: String,
    first: u32,
    len: u32,
}

/// A barrier declaration: the file's `barrier` lines and the model's
/// predefined barriers alike.
struct BarrierDecl {
    name: String,
    scope: Scope,
    count: LaunchCount,
    props: BarrierProps,
    span: Span,
    /// The predefined barrier id, for model barriers.
    id: Option<i64>,
}

struct CodeBuilder {
    code: Code,
    labels: HashMap<String, u32>,
    gotos: Vec<(usize, Ident)>,
    /// Registers some statement of the body writes.
    written: BTreeSet<RegId>,
    /// The first place each register is read.
    first_read: BTreeMap<RegId, Span>,
}

impl CodeBuilder {
    fn emit(&mut self, kind: InstrKind, span: Span, text: &str) -> usize {
        self.code.instrs.push(Instr {
            kind,
            span,
            text: text.to_string(),
        });
        self.code.instrs.len() - 1
    }

    /// A branch that falls through into the next instruction when `cond`
    /// holds; its other target is set by [`CodeBuilder::land`].
    fn branch(&mut self, cond: CExpr, span: Span, text: &str) -> usize {
        let then = self.code.instrs.len() as u32 + 1;
        self.emit(
            InstrKind::Branch {
                cond,
                then,
                els: u32::MAX,
            },
            span,
            text,
        )
    }

    /// Points branch `br`'s other target at the next instruction.
    fn land(&mut self, br: usize) {
        let here = self.code.instrs.len() as u32;
        if let InstrKind::Branch { els, .. } = &mut self.code.instrs[br].kind {
            *els = here;
        }
    }

    /// A register the statement being lowered writes.
    fn write(&mut self, name: &str) -> RegId {
        let r = self.reg(name);
        self.written.insert(r);
        r
    }

    /// A register read at `span`.
    fn read(&mut self, name: &str, span: Span) -> RegId {
        let r = self.reg(name);
        self.first_read.entry(r).or_insert(span);
        r
    }

    fn reg(&mut self, name: &str) -> RegId {
        if let Some(r) = self.code.reg(name) {
            return r;
        }
        self.code.regs.push(name.to_string());
        RegId(self.code.regs.len() as u32 - 1)
    }
}

/// A predefined barrier's name in reports: `bar1(1)` for one that
/// instructions name by its id, the name and `.sync` for one only fixed
/// lowerings use (`warp.sync`, `grid.sync`, `cluster.sync`: their ids are
/// the model's own, and no declared barrier's name has a dot).
fn predefined_name(pb: &bc_models::PredefinedBarrier) -> String {
    if pb.operand {
        format!("{}({})", pb.name, pb.id)
    } else {
        format!("{}.sync", pb.name)
    }
}

#[cfg(test)]
mod tests {
    use bc_syntax::Diagnostic;

    fn lower(text: &str) -> Result<crate::Program, Vec<Diagnostic>> {
        let (lit, diags) = bc_syntax::parse(text);
        assert!(diags.is_empty(), "{diags:?}");
        let model = super::resolve_model(&lit, None).expect("model");
        super::lower(&lit, text, model)
    }

    #[test]
    fn a_host_thread_holds_no_block_instance() {
        let p = lower(
            "litmus \"t\"\nmodel cuda-sm90\nbarrier D = 1 scope=device\nkernel K blocks=1 threads=2 { __syncthreads }\nhost H { launch K, stream=0; arrive D }\n",
        )
        .expect("lowers");
        let h = p.threads.iter().find(|t| t.name == "H").expect("host");
        // D (device scope) is reachable, bar0 (block scope) is not.
        assert!(h.barriers[0].is_some());
        assert!(h.barriers[1].is_none());
        // bar0 counts the kernel's two threads, not the host.
        let bar0 = p
            .barriers
            .iter()
            .find(|b| b.decl_name.starts_with("bar0"))
            .expect("bar0");
        assert_eq!(bar0.launch_count, Some(2));
        let err = lower(
            "litmus \"t\"\nmodel cuda-sm90\nvar x scope=block\nkernel K blocks=1 threads=1 { __syncthreads }\nhost H { launch K, stream=0; __syncthreads; store x, 1 }\n",
        )
        .expect_err("a host cannot name block objects");
        assert_eq!(err.len(), 2, "{err:?}");
        assert!(
            err.iter().all(|d| d.message.contains("host thread `H` is in no block")),
            "{err:?}"
        );
    }

    #[test]
    fn blocks_of_different_grids_are_different_instances() {
        let p = lower(
            "litmus \"t\"\nmodel cuda-sm90\nthread T0 { __syncthreads }\nkernel K1 blocks=1 threads=2 { grid.sync; __syncthreads }\nkernel blocks=1 threads=3 { __syncthreads }\nhost H { launch K1, stream=0 }\n",
        )
        .expect("lowers");
        let mut bar0: Vec<(String, Option<i64>)> = p
            .barriers
            .iter()
            .filter(|b| b.decl_name.starts_with("bar0"))
            .map(|b| (b.name.clone(), b.launch_count))
            .collect();
        bar0.sort();
        assert_eq!(
            bar0,
            vec![
                ("bar0(0)@K1.b0".to_string(), Some(2)),
                ("bar0(0)@b0".to_string(), Some(1)),
                ("bar0(0)@kernel.b0".to_string(), Some(3)),
            ]
        );
        let grid = p
            .barriers
            .iter()
            .find(|b| b.name == "grid.sync@K1")
            .expect("K1's grid barrier");
        assert_eq!(grid.launch_count, Some(2));
    }
}
