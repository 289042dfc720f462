//! The race rule (`docs/semantics.md`, "The rules, by name"; project notes,
//! section 6, memory): barriers only order execution, so two plain
//! accesses must be ordered by barrier-executes-before ("Execution Model",
//! its note on memory visibility). A generic write and a later access of
//! the async proxy (a `cp.async.bulk` copy's read or write) are ordered
//! only when, besides, a proxy fence of the writer lies between them
//! (docs/semantics.md, "The async proxy").

use crate::facts::Ordered;
use crate::{Checker, Violation};
use bc_graph::{EventId, EventKind};
use bc_syntax::FindingKind;

impl Checker<'_> {
    /// race: plain accesses of one location from different threads, one a
    /// write, unordered by executes-before. Always on (no model data name).
    /// Where some barrier orders memory only through fences
    /// (`BarrierProps::needs_fence`), or some arrive is relaxed, unordered by
    /// [`crate::facts::memory_order`] instead.
    pub(crate) fn race(&mut self, f: &Ordered) {
        let exec = self.exec;
        let fenced = exec.props.iter().any(|p| p.needs_fence) || exec.events.iter().any(|e| e.kind.orders_no_memory());
        let memory = if fenced {
            match crate::facts::memory_order(exec) {
                Ok(m) => Some(m),
                // A cycle: executes-before-consistent reports it.
                Err(_) => return,
            }
        } else {
            None
        };
        let ordered = |a: EventId, b: EventId| match &memory {
            Some(m) => m[b.index()].get(a.index()),
            None => f.eb(a, b),
        };
        let order = if fenced {
            "executes-before through fences"
        } else {
            "executes-before"
        };
        let plain: Vec<EventId> = exec
            .ids()
            .filter(|&e| matches!(exec.event(e).kind, EventKind::Read | EventKind::Write))
            .collect();
        // The accesses of each target in event order, so that each pair is
        // read once and only pairs of one target are read at all: the
        // pairs come out in the order of the whole list (by `a`, then by
        // `b`), and the pass is linear in the accesses where each location
        // is touched by few of them (a history of thousands of accesses
        // spread over as many words, as compaction judges for compiled
        // kernels).
        let mut of_target: rustc_hash::FxHashMap<bc_graph::Target, Vec<EventId>> = Default::default();
        let mut rank = Vec::with_capacity(plain.len());
        for &e in &plain {
            let same = of_target.entry(exec.event(e).target).or_default();
            rank.push(same.len());
            same.push(e);
        }
        for (i, &a) in plain.iter().enumerate() {
            let same = &of_target[&exec.event(a).target];
            for &b in &same[rank[i] + 1..] {
                let (ea, ebv) = (exec.event(a), exec.event(b));
                if ea.thread == ebv.thread {
                    continue;
                }
                if !matches!(ea.kind, EventKind::Write) && !matches!(ebv.kind, EventKind::Write) {
                    continue;
                }
                let (before, after) = (ordered(a, b), ordered(b, a));
                if before || after {
                    // Ordered, and (where a generic write precedes an
                    // async-proxy access) through a proxy fence of the
                    // writer.
                    let (w, x) = if before { (a, b) } else { (b, a) };
                    if !self.needs_proxy_fence(w, x) || self.proxy_fenced(f, w, x) {
                        continue;
                    }
                    let msg = format!(
                        "{} and {} are ordered only by {order}: a generic write reaches an access of the async \
                         proxy only through a proxy fence (`fence.proxy.async`) of the writer after the write",
                        self.n(w),
                        self.n(x)
                    );
                    self.out.push(Violation {
                        kind: Some(FindingKind::Race),
                        rule: "race",
                        message: msg,
                        events: vec![w, x],
                    });
                } else {
                    let msg = format!("{} and {} are not ordered by {order}", self.n(a), self.n(b));
                    self.out.push(Violation {
                        kind: Some(FindingKind::Race),
                        rule: "race",
                        message: msg,
                        events: vec![a, b],
                    });
                }
            }
        }
    }

    /// Whether ordering write `w` before access `x` needs a proxy fence:
    /// `w` is a generic write (of a thread or an agent that is not in the
    /// async proxy) and `x` an access of the async proxy.
    fn needs_proxy_fence(&self, w: EventId, x: EventId) -> bool {
        let exec = self.exec;
        let proxy = |e: EventId| exec.event(e).thread.is_some_and(|t| exec.thread(t).async_proxy);
        matches!(exec.event(w).kind, EventKind::Write) && !proxy(w) && proxy(x)
    }

    /// Whether a proxy fence of `w`'s thread after `w` executes before `x`.
    /// A write of a generic copy (`cp.async`) has no thread of the program
    /// to fence it: there, any proxy fence between them counts (the
    /// thread that waited for the copy fences it).
    fn proxy_fenced(&self, f: &Ordered, w: EventId, x: EventId) -> bool {
        let exec = self.exec;
        let Some(t) = exec.event(w).thread else {
            return false;
        };
        let proxy_fence = |e: EventId| {
            matches!(
                exec.event(e).kind,
                EventKind::Fence {
                    scope: bc_graph::FenceScope::ProxyAsync
                }
            )
        };
        if exec.thread(t).agent {
            return exec.ids().any(|e| proxy_fence(e) && f.eb(w, e) && f.eb(e, x));
        }
        let po = &exec.program_order[t.index()];
        let Some(at) = po.iter().position(|&e| e == w) else {
            return false;
        };
        po[at + 1..].iter().any(|&e| proxy_fence(e) && f.eb(e, x))
    }
}
