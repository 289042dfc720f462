//! The explorer: a stateful, depth-first model checker over the interleavings
//! of a [`Program`]'s threads.
//!
//! It is operational: threads step one visible operation at a time, barrier
//! objects count arrivals and cut phases, and a wait may complete on any
//! completed phase it is entitled to (`docs/semantics.md`), so every bmo
//! order and every participates-in choice is enumerated. A state holds the
//! threads, memory, barrier counters and the *history* in the formal
//! model's own terms (each thread's events, each bmo, each wait's
//! participants) but not the interleaving, so interleavings that differ only
//! in the order of independent operations meet in one visited state, while
//! executions the rules could tell apart never do.
//!
//! The explorer flags the findings it can see operationally (deadlock,
//! uninitialized barrier, joins missing, counts) and hands every finished or
//! stuck execution to the independent rule checker (`bc-rules`); the two
//! verdicts are kept apart in [`Outcome`] so tests can compare them.

mod canon;
mod compact;
mod eval;
pub mod liveness;
mod state;

use bc_graph::bits::Bits;
use bc_graph::*;
use bc_syntax::{FindingKind, Quantifier, Span};
use rustc_hash::FxHashMap;
use state::{State, Status};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The default budget for stored states, by their estimated size: with the
/// state graph and allocator overhead, peak memory stays well under 4 GiB.
pub const DEFAULT_MAX_MEMORY: u64 = 1 << 30;

/// Search limits.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_states: u64,
    pub timeout: Option<Duration>,
    /// Stop (`memory-limit`) when the stored states' estimated size passes
    /// this many bytes.
    pub max_memory: u64,
    /// Look for fair cycles (nontermination) after the search.
    pub liveness: bool,
    /// Forget settled history (docs/explorer.md), so loops that synchronize
    /// repeat their states.
    pub compact: bool,
    /// Keep the arrivals of a phase sorted (docs/explorer.md), where sound.
    pub canonical: bool,
    /// Merge states that differ by a renaming of interchangeable threads.
    pub symmetry: bool,
    /// Take a wait whose phase has completed right away, in the step that
    /// made it possible (completed-wait fusion, docs/explorer.md).
    pub fuse: bool,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_states: 2_000_000,
            timeout: None,
            max_memory: DEFAULT_MAX_MEMORY,
            liveness: true,
            compact: true,
            canonical: true,
            symmetry: true,
            fuse: true,
        }
    }
}

/// Why the search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Every reachable state was visited.
    Exhausted,
    StateLimit,
    /// The stored executions grew past the memory budget (a loop that
    /// performs barrier operations or plain accesses forever: each
    /// iteration extends the execution, so no state repeats).
    MemoryLimit,
    Timeout,
}

impl Stop {
    pub fn name(self) -> &'static str {
        match self {
            Stop::Exhausted => "exhausted",
            Stop::StateLimit => "state-limit",
            Stop::MemoryLimit => "memory-limit",
            Stop::Timeout => "timeout",
        }
    }
}

/// One visible step of a witness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub thread: String,
    pub span: Span,
    /// The statement, e.g. `arrive B`.
    pub text: String,
    /// What it did, e.g. `B: arrive count 1 of 2`.
    pub effect: String,
}

/// A witness execution: the interleaving that reached the finding, and the
/// execution in formal terms (bmo per barrier, participates-in per wait).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Witness {
    pub steps: Vec<Step>,
    /// Per barrier instance with operations: (name, labels of its ops in bmo).
    pub bmo: Vec<(String, Vec<String>)>,
    /// Per completed wait: (label of the wait, labels of its participants).
    pub participates_in: Vec<(String, Vec<String>)>,
    /// Labels of waits that never complete.
    pub stuck: Vec<String>,
    /// Labels of the events the finding is about.
    pub focus: Vec<String>,
    /// For a lasso (a fair infinite execution): the step where the cycle
    /// begins; the steps from there on repeat forever.
    pub cycle_start: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub kind: FindingKind,
    pub message: String,
    pub witness: Witness,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Distinct states visited.
    pub states: u64,
    /// Distinct executions that ended (every thread finished, or stuck).
    pub executions: u64,
    pub elapsed: Duration,
}

/// The result of exploring one program.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// One finding per kind (the first found in search order), sorted by kind.
    pub findings: Vec<Finding>,
    pub stats: Stats,
    pub stop: Stop,
    /// Kinds the explorer saw operationally.
    pub operational: std::collections::BTreeSet<FindingKind>,
    /// Kinds the rule checker reported on finished or stuck executions.
    pub judged: std::collections::BTreeSet<FindingKind>,
    /// Kinds the explorer saw only on operations that act on no barrier
    /// object (e.g. `s_barrier_leave` with nothing joined): no execution
    /// shows them, so the rule checker cannot judge them.
    pub objectless: std::collections::BTreeSet<FindingKind>,
    /// Executions the rule checker found structurally invalid (explorer bugs).
    pub internal_errors: Vec<String>,
}

impl Outcome {
    pub fn verdict(&self) -> std::collections::BTreeSet<FindingKind> {
        self.findings.iter().map(|f| f.kind).collect()
    }
}

/// A choice at one state: thread `thread` steps; for a wait, `phase` picks
/// the completed phase (index into the barrier's done list) it completes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Choice {
    thread: u32,
    phase: Option<u32>,
}

struct Frame {
    /// The length of the path before the steps that reached this state.
    base: usize,
    state: std::rc::Rc<State>,
    /// `Explorer::ident` for this state.
    ident: std::rc::Rc<Vec<u32>>,
    choices: Vec<Choice>,
    /// Per choice, the threads whose identical choices it stands for
    /// (symmetry.rs, `prune_symmetric`).
    twins: Vec<Vec<u32>>,
    next: usize,
    /// This state's index in the state graph.
    node: u32,
}

/// The state on top of the DFS stack (the source of the step being taken).
fn stack_state(stack: &[Frame]) -> &State {
    &stack.last().expect("a step has a source state").state
}

/// Explores every reachable state of `program`.
pub fn explore(program: &Program, limits: Limits) -> Outcome {
    Explorer::new(program, limits).run()
}

pub(crate) struct Explorer<'p> {
    p: &'p Program,
    limits: Limits,
    start: Instant,
    findings: BTreeMap<FindingKind, Finding>,
    operational: std::collections::BTreeSet<FindingKind>,
    judged: std::collections::BTreeSet<FindingKind>,
    internal_errors: Vec<String>,
    sometimes_holds: Vec<bool>,
    path: Vec<Step>,
    executions: u64,
    /// Findings raised while computing the current step (operational).
    /// (kind, message, objectless): objectless findings come from operations
    /// that act on no barrier object, so no execution can show them.
    pending: Vec<(FindingKind, String, bool)>,
    /// Barriers some parity wait uses: their last completed phase is kept.
    parity_barriers: Vec<bool>,
    /// The barrier whose phases are kept sorted (canon.rs), if any.
    sortable: Option<usize>,
    /// Classes of interchangeable threads (symmetry.rs).
    sym_classes: Vec<Vec<usize>>,
    /// For the state being worked on: which declared thread each thread
    /// index stands for (symmetry renames threads; witnesses show the
    /// declared names along the path).
    ident: Vec<u32>,
    /// Barriers whose phase numbers matter (tokens, parity).
    token_barriers: Vec<bool>,
    /// Barriers whose history is never forgotten: parity barriers, and
    /// token barriers when a token may reach memory (compact.rs).
    pinned: Vec<bool>,
    /// Barriers whose completed waits may be fused (fuse.rs).
    lockstep: Vec<bool>,
    /// Per code and pc: the barrier and location declarations the thread
    /// may still operate on from there (history compaction).
    touches: Vec<Vec<(Vec<bool>, Vec<bool>)>>,
    objectless: std::collections::BTreeSet<FindingKind>,
}

impl<'p> Explorer<'p> {
    fn new(p: &'p Program, limits: Limits) -> Explorer<'p> {
        Explorer {
            p,
            limits,
            start: Instant::now(),
            findings: BTreeMap::new(),
            operational: Default::default(),
            judged: Default::default(),
            internal_errors: Vec::new(),
            sometimes_holds: vec![false; p.asserts.len()],
            path: Vec::new(),
            executions: 0,
            pending: Vec::new(),
            objectless: Default::default(),
            parity_barriers: Self::barriers_where(p, |op, _| matches!(op, BarrierOp::Wait(w) if w.parity.is_some())),
            touches: compact::touches(p),
            lockstep: fuse::lockstep_barriers(p),
            pinned: compact::pinned_barriers(p),
            sortable: if limits.canonical {
                canon::sortable_barrier(p)
            } else {
                None
            },
            sym_classes: if limits.symmetry {
                symmetry::classes(p)
            } else {
                Vec::new()
            },
            ident: (0..p.threads.len() as u32).collect(),
            token_barriers: Self::barriers_where(p, |op, result| {
                matches!(op, BarrierOp::Wait(w) if w.token.is_some() || w.parity.is_some())
                    || matches!(result, Some(BarrierResult::Token(_)))
            }),
        }
    }

    /// Barrier instances some instruction of a thread applies `pred` to.
    fn barriers_where(p: &Program, pred: impl Fn(&BarrierOp, &Option<BarrierResult>) -> bool) -> Vec<bool> {
        let mut out = vec![false; p.barriers.len()];
        for t in &p.threads {
            for ins in &p.codes[t.code.index()].instrs {
                if let InstrKind::Barrier { op, sel, result } = &ins.kind {
                    let decl = match sel {
                        BarrierSel::Decl(d) | BarrierSel::JoinedOr { decl: d, .. } => *d,
                        BarrierSel::Joined { .. } => continue,
                    };
                    if pred(op, result) {
                        out[t.barriers[decl as usize].index()] = true;
                    }
                }
            }
        }
        out
    }

    fn run(mut self) -> Outcome {
        let mut init = State::initial(self.p);
        for t in 0..self.p.threads.len() {
            self.run_local(&mut init, t);
        }
        self.flush_pending(&init, &[]);
        // States are shared between the visited index and the DFS stack.
        let mut index: FxHashMap<std::rc::Rc<State>, u32> = FxHashMap::default();
        let mut nodes: Vec<liveness::Node> = Vec::new();
        let mut edges: Vec<liveness::Edge> = Vec::new();
        let choices = self.choices(&init);
        if self.limits.liveness {
            nodes.push(self.node(&init, &choices, u32::MAX, None, &mut edges, 0));
        }
        let (choices, twins) = self.prune_symmetric(&init, choices);
        let init = std::rc::Rc::new(init);
        index.insert(init.clone(), 0);
        if choices.is_empty() {
            self.at_end(&init);
        }
        let mut stack = vec![Frame {
            base: 0,
            ident: std::rc::Rc::new(self.ident.clone()),
            state: init,
            choices,
            twins,
            next: 0,
            node: 0,
        }];
        let mut stop = Stop::Exhausted;
        let mut tick = 0u32;
        let mut stored_bytes = 0u64;
        while let Some(top) = stack.last_mut() {
            if top.next == top.choices.len() {
                let base = top.base;
                stack.pop();
                self.path.truncate(base);
                continue;
            }
            let choice = top.choices[top.next];
            let twins = std::mem::take(&mut top.twins[top.next]);
            top.next += 1;
            let from = top.node;
            let mut s = State::clone(&top.state);
            self.ident = Vec::clone(&top.ident);
            let base = self.path.len();
            let step = self.step(&mut s, choice);
            self.path.push(step);
            self.fuse_waits(&mut s);
            self.flush_pending(&s, &[]);
            self.normalize(&mut s);
            let record = self.limits.liveness;
            let seen = index.get(&s).copied();
            if record {
                // The edge to a seen state, or to the state about to be added.
                let to = seen.unwrap_or(index.len() as u32);
                let query = self.is_query(stack_state(&stack), choice);
                edges.push(liveness::Edge {
                    from,
                    to,
                    thread: choice.thread,
                    query,
                    spin: false,
                    choice,
                });
                // A twin's step leads to this state up to renaming: its edge
                // counts for its thread (fairness) and replays as the
                // representative's choice (witnesses).
                for &u in &twins {
                    edges.push(liveness::Edge {
                        from,
                        to,
                        thread: u,
                        query,
                        spin: false,
                        choice,
                    });
                }
            }
            if seen.is_some() {
                self.path.truncate(base);
                continue;
            }
            if index.len() as u64 >= self.limits.max_states {
                stop = Stop::StateLimit;
                self.judge_stopped(&s);
                break;
            }
            // Every stored state carries its threads and its execution so
            // far: bound their estimated total size.
            stored_bytes += s.approx_bytes();
            if stored_bytes > self.limits.max_memory {
                stop = Stop::MemoryLimit;
                self.judge_stopped(&s);
                break;
            }
            tick += 1;
            if tick % 1024 == 0 {
                if let Some(t) = self.limits.timeout {
                    if self.start.elapsed() >= t {
                        stop = Stop::Timeout;
                        self.judge_stopped(&s);
                        break;
                    }
                }
            }
            let to = index.len() as u32;
            let choices = self.choices(&s);
            if record {
                nodes.push(self.node(&s, &choices, from, Some(choice), &mut edges, to));
            }
            let (choices, twins) = self.prune_symmetric(&s, choices);
            let s = std::rc::Rc::new(s);
            index.insert(s.clone(), to);
            if choices.is_empty() {
                self.at_end(&s);
            }
            stack.push(Frame {
                base,
                ident: std::rc::Rc::new(self.ident.clone()),
                state: s,
                choices,
                twins,
                next: 0,
                node: to,
            });
        }
        let states = index.len() as u64;
        drop(stack);
        drop(index);
        if stop == Stop::Exhausted && self.limits.liveness {
            self.liveness(&nodes, &edges);
        }
        // `sometimes` assertions fail when no finished execution satisfies them.
        if stop == Stop::Exhausted {
            for (i, a) in self.p.asserts.iter().enumerate() {
                if a.quantifier == Quantifier::Sometimes && !self.sometimes_holds[i] {
                    let msg = format!(
                        "`{}`: no execution that ends with every thread finished satisfies it",
                        a.text
                    );
                    self.record(FindingKind::Assertion, msg, Witness::default(), false);
                }
            }
        }
        Outcome {
            findings: self.findings.into_values().collect(),
            stats: Stats {
                states,
                executions: self.executions,
                elapsed: self.start.elapsed(),
            },
            stop,
            operational: self.operational,
            judged: self.judged,
            objectless: self.objectless,
            internal_errors: self.internal_errors,
        }
    }

    /// The analysis record of a new state, and the self-loops of its spins.
    fn node(
        &self,
        s: &State,
        choices: &[Choice],
        parent: u32,
        via: Option<Choice>,
        edges: &mut Vec<liveness::Edge>,
        me: u32,
    ) -> liveness::Node {
        let n = self.p.threads.len();
        let mut node = liveness::Node {
            parent,
            via,
            enabled: Bits::new(n),
            spinning: Bits::new(n),
            alive: Bits::new(n),
            started: Bits::new(n),
            at_wait: Bits::new(n),
            host_sync: false,
        };
        for c in choices {
            node.enabled.set(c.thread as usize);
        }
        for (t, th) in s.threads.iter().enumerate() {
            if !matches!(th.status, Status::Done | Status::NotLaunched) {
                node.alive.set(t);
            }
            if th.started {
                node.started.set(t);
            }
            if node.enabled.get(t) || matches!(th.status, Status::Done | Status::NotLaunched) {
                continue;
            }
            let ins = self.p.instr(ThreadId(t as u32), th.pc).map(|i| &i.kind);
            let spins = th.status == Status::Diverged || matches!(ins, Some(InstrKind::Await(_)));
            if spins {
                node.spinning.set(t);
                node.enabled.set(t);
                let choice = Choice {
                    thread: t as u32,
                    phase: None,
                };
                edges.push(liveness::Edge {
                    from: me,
                    to: me,
                    thread: t as u32,
                    query: false,
                    spin: true,
                    choice,
                });
            } else if self.at_wait(s, t) {
                node.at_wait.set(t);
            } else if matches!(ins, Some(InstrKind::DeviceSync)) && self.p.threads[t].kind == ThreadKind::Host {
                node.host_sync = true;
            }
        }
        node
    }

    /// Whether thread `c.thread`'s next step in `s` is a `stream_query`.
    fn is_query(&self, s: &State, c: Choice) -> bool {
        let t = c.thread as usize;
        matches!(
            self.p.instr(ThreadId(c.thread), s.threads[t].pc).map(|i| &i.kind),
            Some(InstrKind::StreamQuery { .. })
        )
    }

    /// Looks for a fair cycle in which some thread never ends, and records
    /// it as `nontermination` (or `deadlock`, when a thread waits on a
    /// barrier throughout it) with a lasso witness.
    fn liveness(&mut self, nodes: &[liveness::Node], edges: &[liveness::Edge]) {
        let Some((progress, strong)) = liveness::Progress::parse(&self.p.progress) else {
            return;
        };
        let analysis = liveness::Analysis::new(self.p, progress, strong, nodes, edges);
        let Some(cycle) = analysis.find() else { return };
        let kind = if cycle.stuck_waiter.is_some() {
            FindingKind::Deadlock
        } else {
            FindingKind::Nontermination
        };
        let alive: Vec<String> = (0..self.p.threads.len())
            .filter(|&t| nodes[cycle.entry as usize].alive.get(t))
            .map(|t| self.name_of(t).to_string())
            .collect();
        let message = match cycle.stuck_waiter {
            Some(t) => format!(
                "{} waits on a barrier forever while others run on (a fair cycle under progress model `{}`)",
                self.name_of(t as usize),
                self.p.progress
            ),
            None => format!(
                "a fair infinite execution under progress model `{}` in which {} never finish",
                self.p.progress,
                alive.join(", ")
            ),
        };
        if self.findings.contains_key(&kind) {
            self.operational.insert(kind);
            return;
        }
        // The lasso: the stem along DFS-tree parents, then the cycle.
        let mut stem = Vec::new();
        let mut at = cycle.entry;
        while let Some(c) = nodes[at as usize].via {
            stem.push(c);
            at = nodes[at as usize].parent;
        }
        stem.reverse();
        let loop_edges: Vec<liveness::Edge> = analysis.cycle(&cycle).into_iter().map(|e| edges[e as usize]).collect();
        let witness = self.lasso(&stem, &loop_edges);
        self.operational.insert(kind);
        self.findings.insert(kind, Finding { kind, message, witness });
    }

    /// Replays a lasso from the initial state into a witness.
    /// The reductions applied to every new state, in order. Renames
    /// `self.ident` along with the threads.
    fn normalize(&mut self, s: &mut State) {
        if self.limits.compact {
            self.compact(s);
        }
        self.canonicalize(s);
        if let Some(perm) = self.symmetrize(s) {
            self.ident = perm.iter().map(|&old| self.ident[old]).collect();
            // The renaming may leave a phase's arrivals out of order.
            self.canonicalize(s);
        }
    }

    /// The span and text of instruction `pc` in the body of the thread that
    /// index `t` stands for (symmetry may map a thread onto another one's
    /// identical body).
    pub(crate) fn declared_site(&self, t: usize, pc: u32) -> (Span, String) {
        self.p
            .instr(ThreadId(self.ident[t]), pc)
            .map_or((Span::default(), "...".to_string()), |i| (i.span, i.text.clone()))
    }

    /// The declared name of thread index `t` in the current state.
    pub(crate) fn name_of(&self, t: usize) -> &str {
        &self.p.threads[self.ident[t] as usize].name
    }

    fn lasso(&mut self, stem: &[Choice], cycle: &[liveness::Edge]) -> Witness {
        let saved_path = std::mem::take(&mut self.path);
        let saved_pending = std::mem::take(&mut self.pending);
        let saved_ident = std::mem::replace(&mut self.ident, (0..self.p.threads.len() as u32).collect());
        let mut s = State::initial(self.p);
        for t in 0..self.p.threads.len() {
            self.run_local(&mut s, t);
        }
        let mut steps = Vec::new();
        for &c in stem {
            steps.push(self.step(&mut s, c));
            steps.extend(self.fused_steps(&mut s));
            self.normalize(&mut s);
        }
        let entry = s.clone();
        let cycle_start = steps.len();
        for e in cycle {
            if e.spin {
                let t = e.thread as usize;
                let (span, text) = self.declared_site(t, s.threads[t].pc);
                steps.push(Step {
                    thread: self.name_of(t).to_string(),
                    span,
                    text,
                    effect: "spins: the condition does not hold".into(),
                });
            } else {
                steps.push(self.step(&mut s, e.choice));
                steps.extend(self.fused_steps(&mut s));
                self.normalize(&mut s);
            }
        }
        self.path = steps;
        let mut w = self.witness(&entry, &[], &[]);
        w.cycle_start = Some(cycle_start);
        self.path = saved_path;
        self.pending = saved_pending;
        self.ident = saved_ident;
        w
    }

    fn record(&mut self, kind: FindingKind, message: String, witness: Witness, judged: bool) {
        if judged {
            self.judged.insert(kind);
        } else {
            self.operational.insert(kind);
        }
        self.findings.entry(kind).or_insert(Finding { kind, message, witness });
    }

    /// Records the operational findings of the last step, with the path so
    /// far (and `stuck` threads blocked on their waits) as witness.
    fn flush_pending(&mut self, s: &State, stuck: &[usize]) {
        for (kind, msg, objectless) in std::mem::take(&mut self.pending) {
            if objectless {
                self.objectless.insert(kind);
            } else {
                self.operational.insert(kind);
            }
            if !self.findings.contains_key(&kind) {
                let w = self.witness(s, stuck, &[]);
                self.findings.insert(
                    kind,
                    Finding {
                        kind,
                        message: msg,
                        witness: w,
                    },
                );
            }
        }
    }

    /// A state with no choice: every thread finished, or the rest are stuck.
    fn at_end(&mut self, s: &State) {
        self.executions += 1;
        let blocked: Vec<usize> = (0..s.threads.len())
            .filter(|&t| !matches!(s.threads[t].status, Status::Done | Status::NotLaunched))
            .collect();
        let stuck_waits: Vec<usize> = blocked.iter().copied().filter(|&t| self.at_wait(s, t)).collect();
        // A uniform (block-wide) barrier that some threads reached while
        // others never will: divergent.
        for &t in &stuck_waits {
            if let Some(InstrKind::Barrier { sel, .. }) =
                self.p.instr(ThreadId(t as u32), s.threads[t].pc).map(|i| &i.kind)
            {
                if let Some(b) = self.resolve(s, t, *sel) {
                    if self.p.barriers[b].props.uniform && s.bars[b].open.as_ref().is_some_and(|p| p.arrivals > 0) {
                        let msg = format!(
                            "{} is reached by only some threads of its scope",
                            self.p.barriers[b].name
                        );
                        self.ub(bc_syntax::UbKind::DivergentBarrier, msg);
                    }
                }
            }
        }
        if !blocked.is_empty() {
            let at = |ts: &[usize]| {
                let names: Vec<String> = ts
                    .iter()
                    .map(|&t| format!("{} at `{}`", self.name_of(t), self.instr_text(s, t)))
                    .collect();
                names.join(", ")
            };
            let finding = if stuck_waits.is_empty() {
                Some((FindingKind::Nontermination, format!("spins forever: {}", at(&blocked))))
            } else if self.p.model.rules.has(bc_models::Rule::WaitCompletes) {
                Some((FindingKind::Deadlock, format!("stuck forever: {}", at(&stuck_waits))))
            } else {
                None
            };
            if let Some((kind, msg)) = finding {
                self.pending.push((kind, msg, false));
            }
        }
        self.flush_pending(s, &stuck_waits);
        // The rule checker judges the execution.
        let (exec, names) = self.execution(s, &stuck_waits);
        self.judge(&exec, &names);
        // Assertions over finished executions.
        if blocked.is_empty() {
            for (i, a) in self.p.asserts.iter().enumerate() {
                let holds = eval::eval_final(self.p, s, &a.cond) != 0;
                let bad = match a.quantifier {
                    Quantifier::Always => !holds,
                    Quantifier::Never => holds,
                    Quantifier::Sometimes => {
                        self.sometimes_holds[i] |= holds;
                        false
                    }
                };
                if bad && !self.findings.contains_key(&FindingKind::Assertion) {
                    let what = if holds { "holds" } else { "does not hold" };
                    let msg = format!(
                        "`{}` {what} in this execution ({})",
                        a.text,
                        eval::describe_final(self.p, s, &a.cond)
                    );
                    let w = self.witness_with(&exec, &names, &[]);
                    self.record(FindingKind::Assertion, msg, w, false);
                } else if bad {
                    self.operational.insert(FindingKind::Assertion);
                }
            }
        }
    }

    /// At a search limit, the rule checker still judges the execution that
    /// reached it, so a stopped search reports what it saw.
    fn judge_stopped(&mut self, s: &State) {
        let (exec, names) = self.execution(s, &[]);
        self.judge(&exec, &names);
    }

    /// The rule checker judges an execution; its findings are recorded with
    /// the current path as witness.
    pub(crate) fn judge(&mut self, exec: &Execution, names: &witness::ExecNames) {
        for v in bc_rules::check(exec, self.p.model.rules, names) {
            match v.kind {
                None => {
                    if self.internal_errors.len() < 8 {
                        self.internal_errors.push(format!("{}: {}", v.rule, v.message));
                    }
                }
                Some(kind) => {
                    if !self.findings.contains_key(&kind) {
                        let w = self.witness_with(exec, names, &v.events);
                        self.record(kind, v.message, w, true);
                    } else {
                        self.judged.insert(kind);
                    }
                }
            }
        }
    }

    fn at_wait(&self, s: &State, t: usize) -> bool {
        matches!(
            self.p.instr(ThreadId(t as u32), s.threads[t].pc).map(|i| &i.kind),
            Some(InstrKind::Barrier {
                op: BarrierOp::Wait(_),
                ..
            })
        )
    }

    fn instr_text(&self, s: &State, t: usize) -> String {
        self.p
            .instr(ThreadId(t as u32), s.threads[t].pc)
            .map_or_else(|| "end".into(), |i| i.text.clone())
    }
}

mod fuse;
mod step;
mod symmetry;
pub(crate) mod witness;
