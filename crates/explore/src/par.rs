//! The concurrent core of parallel exploration: workers claim chunks of a
//! search level from a shared counter until none is left, and their results
//! are put back in chunk order.
//!
//! Everything else stays single-threaded on purpose: the visited set is
//! only read and written by the merging thread, in frontier order, so
//! state numbers, the first finding of each kind and its witness are the
//! same whatever the number of jobs. Termination is the end of a scope:
//! a level is done when every worker has found the counter exhausted and
//! returned. The loom model tests (`tests/loom.rs`, `RUSTFLAGS="--cfg
//! loom"`) check that each chunk is claimed exactly once and the merge is in
//! order, for every interleaving of two and three workers.

#[cfg(loom)]
use loom::sync::atomic::{AtomicUsize, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicUsize, Ordering};

/// A level's chunks, claimed in increasing order by whichever worker asks.
pub struct ChunkQueue {
    next: AtomicUsize,
    chunks: usize,
}

impl ChunkQueue {
    pub fn new(chunks: usize) -> ChunkQueue {
        ChunkQueue {
            next: AtomicUsize::new(0),
            chunks,
        }
    }

    /// The next unclaimed chunk, or `None` when every chunk is claimed.
    /// Each chunk index is returned to exactly one caller.
    pub fn claim(&self) -> Option<usize> {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        (i < self.chunks).then_some(i)
    }
}

/// A worker's loop: claims chunks until the queue is exhausted, running
/// `work` on each; returns what it did, tagged by chunk.
pub fn drain<R>(queue: &ChunkQueue, mut work: impl FnMut(usize) -> R) -> Vec<(usize, R)> {
    let mut out = Vec::new();
    while let Some(c) = queue.claim() {
        out.push((c, work(c)));
    }
    out
}

/// Puts the workers' results back in chunk order. Panics if a chunk is
/// missing or was done twice (the queue's invariant).
pub fn merge<R>(parts: Vec<Vec<(usize, R)>>, chunks: usize) -> Vec<R> {
    let mut slots: Vec<Option<R>> = (0..chunks).map(|_| None).collect();
    for (c, r) in parts.into_iter().flatten() {
        assert!(slots[c].is_none(), "chunk {c} done twice");
        slots[c] = Some(r);
    }
    slots
        .into_iter()
        .enumerate()
        .map(|(c, r)| r.unwrap_or_else(|| panic!("chunk {c} never done")))
        .collect()
}
