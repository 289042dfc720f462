//! Loom model tests of the parallel explorer's concurrent core (`par.rs`):
//! for every interleaving loom can produce, each chunk of a level is claimed
//! by exactly one worker, every worker stops (termination), and the merge
//! returns the results in chunk order.
//!
//! Bounds: 2 workers over 3 chunks and 3 workers over 2 chunks (every
//! interleaving, loom's default preemption bound); the real explorer uses
//! the same `ChunkQueue`, `drain` and `merge`.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p bc-explore --test loom --release`
//! (`.ci/run` does, in its own target directory).
#![cfg(loom)]

use bc_explore::par::{drain, merge, ChunkQueue};
use loom::sync::Arc;
use loom::thread;

fn model(workers: usize, chunks: usize) {
    loom::model(move || {
        let queue = Arc::new(ChunkQueue::new(chunks));
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let queue = queue.clone();
                thread::spawn(move || drain(&queue, |c| (w, c * 10)))
            })
            .collect();
        let parts: Vec<Vec<(usize, (usize, usize))>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        // Each chunk exactly once, across all workers.
        let mut claimed: Vec<usize> = parts.iter().flatten().map(|(c, _)| *c).collect();
        claimed.sort_unstable();
        assert_eq!(claimed, (0..chunks).collect::<Vec<_>>());
        // Each worker claims in increasing order (first findings per worker
        // are its earliest in search order).
        for p in &parts {
            assert!(p.windows(2).all(|w| w[0].0 < w[1].0));
        }
        // The merge is in chunk order whoever did the work.
        let merged: Vec<usize> = merge(parts, chunks).into_iter().map(|(_, v)| v).collect();
        assert_eq!(merged, (0..chunks).map(|c| c * 10).collect::<Vec<_>>());
        // The queue stays exhausted.
        assert_eq!(queue.claim(), None);
    });
}

#[test]
fn two_workers_three_chunks() {
    model(2, 3);
}

#[test]
fn three_workers_two_chunks() {
    model(3, 2);
}

#[test]
fn more_workers_than_chunks_all_stop() {
    model(2, 1);
}
