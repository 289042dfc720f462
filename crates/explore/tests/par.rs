//! The concurrent core without loom: the same invariants on real threads
//! (the loom tests in `loom.rs` cover every interleaving of small cases).

use bc_explore::par::{drain, merge, ChunkQueue};

#[test]
fn real_threads_claim_each_chunk_once_and_merge_in_order() {
    for workers in [1, 2, 4] {
        let queue = ChunkQueue::new(1000);
        let parts: Vec<Vec<(usize, usize)>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..workers).map(|_| s.spawn(|| drain(&queue, |c| c * 3))).collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(merge(parts, 1000), (0..1000).map(|c| c * 3).collect::<Vec<_>>());
    }
}

#[test]
#[should_panic(expected = "never done")]
fn merge_rejects_a_missing_chunk() {
    merge(vec![vec![(0, 1)]], 2);
}
