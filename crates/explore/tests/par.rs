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

/// Keys and slots live in arena chunks that never move: after many chunks
/// (and a key larger than a chunk), every handle still reads its own key,
/// and an equal key finds the same slot from any thread.
#[test]
fn arena_slots_and_keys_stay_put() {
    use bc_explore::par::{Bytes, SlotRef, VisitedSet};
    let set = VisitedSet::<Bytes>::new(4);
    let key = |i: u32| -> Vec<u8> {
        let len = if i == 77 { 3 << 20 } else { (i % 300) as usize + 1 };
        (0..len).map(|j| (i as usize * 31 + j) as u8).collect()
    };
    let hash = |i: u32| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let n = 20_000;
    let handles: Vec<Vec<SlotRef<Bytes>>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    (0..n)
                        .map(|i| set.intern_ref(hash(i), &key(i)[..], |k, arena| arena.store(k)))
                        .collect()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for i in 0..n {
        let (a, b) = (handles[0][i as usize], handles[1][i as usize]);
        assert!(SlotRef::ptr_eq(a, b), "key {i} has one slot");
        // SAFETY: `set` is alive and not cleared.
        let slot = unsafe { a.get() };
        assert_eq!(&*slot.key, &key(i)[..], "key {i} reads back");
        assert_eq!(slot.hash, hash(i));
    }
}
