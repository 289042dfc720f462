//! Loom model tests of the parallel explorer's concurrent core (`par.rs`):
//! for every interleaving loom can produce, each chunk of a level is claimed
//! by exactly one worker, every worker stops (termination), the merge
//! returns the results in chunk order, and the shared visited set gives
//! equal states one slot whoever interns first.
//!
//! Bounds: 2 workers over 3 chunks, 3 workers over 2 chunks, 2 over 1; two
//! threads interning two keys each into a 2-shard set (every interleaving,
//! loom's default preemption bound); the real explorer uses the same
//! `ChunkQueue`, `drain`, `merge` and `VisitedSet`.
//!
//! Run with `cargo test -p bc-par --features loom --test loom --release`
//! (`.ci/run` does; the test needs the feature).

use bc_par::{drain, merge, ChunkQueue, SlotRef, VisitedSet};
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

#[test]
fn visited_set_gives_equal_states_one_slot() {
    loom::model(|| {
        let set = Arc::new(VisitedSet::<u32>::new(2));
        let handles: Vec<_> = [[7u32, 9], [9, 7]]
            .into_iter()
            .map(|keys| {
                let set = set.clone();
                thread::spawn(move || keys.map(|k| set.intern(k as u64, k)))
            })
            .collect();
        let slots: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        // Both threads got the same slot for 7, and for 9.
        assert!(SlotRef::ptr_eq(slots[0][0], slots[1][1]));
        assert!(SlotRef::ptr_eq(slots[0][1], slots[1][0]));
        assert!(!SlotRef::ptr_eq(slots[0][0], slots[0][1]));
        // Nobody numbered them: the merging thread does, once.
        // SAFETY: `set` is alive and never cleared here.
        let (a, b) = unsafe { (slots[0][0].get(), slots[1][1].get()) };
        assert_eq!(a.id(), None);
        a.set_id(3);
        assert_eq!(b.id(), Some(3));
    });
}
