//! The static operation graph of a program (petgraph) and its DOT rendering:
//! one node per instruction of every thread, program-order (control-flow)
//! edges, and thread-barrier-order edges between consecutive barrier
//! operations on the same object instance.

use crate::ids::*;
use crate::program::*;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use std::fmt::Write;

#[derive(Clone, Debug)]
pub struct OpNode {
    pub thread: ThreadId,
    pub pc: u32,
    /// The barrier instance a barrier operation acts on.
    pub barrier: Option<BarrierId>,
    pub text: String,
    pub span: bc_syntax::Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpEdge {
    /// Control flow inside one thread.
    ProgramOrder,
    /// Next barrier operation on the same object along some path.
    ThreadBarrierOrder,
}

/// Builds the operation graph.
pub fn operation_graph(p: &Program) -> DiGraph<OpNode, OpEdge> {
    let mut g = DiGraph::new();
    for (t, info) in p.threads.iter().enumerate() {
        let tid = ThreadId(t as u32);
        let code = &p.codes[info.code.index()];
        let nodes: Vec<NodeIndex> = code
            .instrs
            .iter()
            .enumerate()
            .map(|(pc, ins)| {
                let barrier = match ins.kind {
                    InstrKind::Barrier {
                        sel: BarrierSel::Decl(d) | BarrierSel::JoinedOr { decl: d, .. },
                        ..
                    } => info.barriers[d as usize],
                    _ => None,
                };
                g.add_node(OpNode {
                    thread: tid,
                    pc: pc as u32,
                    barrier,
                    text: ins.text.clone(),
                    span: ins.span,
                })
            })
            .collect();
        for pc in 0..code.instrs.len() as u32 {
            for s in code.successors(pc) {
                if let Some(&to) = nodes.get(s as usize) {
                    g.add_edge(nodes[pc as usize], to, OpEdge::ProgramOrder);
                }
            }
        }
        // Thread-barrier-order: from each barrier op, search forward through
        // non-barrier-on-this-object nodes.
        for (pc, &n) in nodes.iter().enumerate() {
            let Some(b) = g[n].barrier else { continue };
            let mut seen = vec![false; nodes.len()];
            let mut stack: Vec<u32> = code.successors(pc as u32);
            while let Some(s) = stack.pop() {
                let Some(&m) = nodes.get(s as usize) else {
                    continue;
                };
                if std::mem::replace(&mut seen[s as usize], true) {
                    continue;
                }
                if g[m].barrier == Some(b) {
                    g.add_edge(n, m, OpEdge::ThreadBarrierOrder);
                } else {
                    stack.extend(code.successors(s));
                }
            }
        }
    }
    g
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Renders the operation graph as DOT (one cluster per thread).
pub fn to_dot(p: &Program) -> String {
    let g = operation_graph(p);
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", escape(&p.test));
    let _ = writeln!(out, "  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];");
    for (t, info) in p.threads.iter().enumerate() {
        let _ = writeln!(out, "  subgraph cluster_t{t} {{\n    label=\"{}\";", escape(&info.name));
        let _ = writeln!(out, "    t{t}_start [shape=point];");
        for n in g.node_indices().filter(|&n| g[n].thread.index() == t) {
            let node = &g[n];
            let label = match node.barrier {
                Some(b) => format!("{}\\n[{}]", escape(&node.text), escape(&p.barriers[b.index()].name)),
                None => escape(&node.text),
            };
            let style = if node.barrier.is_some() { ", style=bold" } else { "" };
            let _ = writeln!(out, "    n{} [label=\"{label}\"{style}];", n.index());
        }
        if let Some(first) = g.node_indices().find(|&n| g[n].thread.index() == t) {
            let _ = writeln!(out, "    t{t}_start -> n{};", first.index());
        }
        let _ = writeln!(out, "  }}");
    }
    for e in g.edge_references() {
        let style = match e.weight() {
            OpEdge::ProgramOrder => "",
            OpEdge::ThreadBarrierOrder => " [style=dashed, color=blue, label=\"tbo\"]",
        };
        let _ = writeln!(out, "  n{} -> n{}{style};", e.source().index(), e.target().index());
    }
    out.push_str("}\n");
    out
}
