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

#[cfg(loom)]
use loom::sync::{atomic::AtomicU32, Arc, Mutex};
#[cfg(not(loom))]
use std::sync::{atomic::AtomicU32, Arc, Mutex};

/// A shared handle on a visited state's slot.
pub type SlotRef<K> = Arc<Slot<K>>;

/// A visited state, shared by every worker that reached it, and its number
/// once the merging thread has given it one.
pub struct Slot<K> {
    pub key: K,
    pub hash: u64,
    id: AtomicU32,
}

impl<K> Slot<K> {
    /// The state's number, if the merge has numbered it.
    pub fn id(&self) -> Option<u32> {
        let v = self.id.load(Ordering::Relaxed);
        (v != u32::MAX).then_some(v)
    }
    /// Numbers the state (the merging thread only, in frontier order).
    pub fn set_id(&self, id: u32) {
        self.id.store(id, Ordering::Relaxed);
    }
}

/// The shared visited set: workers intern the states they reach (equal
/// states share one slot, whoever came first), so duplicates are found and
/// freed in parallel; numbers are given by the merging thread alone, in
/// frontier order, which keeps them independent of the workers' timing.
pub struct VisitedSet<K> {
    shards: Vec<Padded<Mutex<hashbrown::HashTable<Arc<Slot<K>>>>>>,
}

/// A shard on cache lines of its own: workers locking neighbouring shards
/// would otherwise bounce one line between cores.
#[repr(align(128))]
struct Padded<T>(T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<K: PartialEq> VisitedSet<K> {
    pub fn new(shards: usize) -> VisitedSet<K> {
        VisitedSet {
            shards: (0..shards.max(1))
                .map(|_| Padded(Mutex::new(hashbrown::HashTable::new())))
                .collect(),
        }
    }

    /// The slot of a key equal to `key` (with hash `hash`): the existing one
    /// when an equal key was interned before, else a new unnumbered one
    /// holding `make(key)` (so a duplicate costs no copy).
    pub fn intern_ref<Q: ?Sized + PartialEq>(&self, hash: u64, key: &Q, make: impl FnOnce(&Q) -> K) -> Arc<Slot<K>>
    where
        K: std::borrow::Borrow<Q>,
    {
        // High bits pick the shard; the table uses the low ones.
        let shard = &self.shards[((hash >> 48) as usize) % self.shards.len()];
        let mut table = shard.lock().expect("visited-set shard");
        match table.entry(hash, |s| s.hash == hash && s.key.borrow() == key, |s| s.hash) {
            hashbrown::hash_table::Entry::Occupied(e) => e.get().clone(),
            hashbrown::hash_table::Entry::Vacant(v) => {
                let slot = Arc::new(Slot {
                    key: make(key),
                    hash,
                    id: AtomicU32::new(u32::MAX),
                });
                v.insert(slot.clone());
                slot
            }
        }
    }

    /// The slot of `key` (with hash `hash`): the existing one when an equal
    /// key was interned before, else a new unnumbered one.
    pub fn intern(&self, hash: u64, key: K) -> Arc<Slot<K>> {
        // High bits pick the shard; the table uses the low ones.
        let shard = &self.shards[((hash >> 48) as usize) % self.shards.len()];
        let mut table = shard.lock().expect("visited-set shard");
        match table.entry(hash, |s| s.hash == hash && s.key == key, |s| s.hash) {
            hashbrown::hash_table::Entry::Occupied(e) => e.get().clone(),
            hashbrown::hash_table::Entry::Vacant(v) => {
                let slot = Arc::new(Slot {
                    key,
                    hash,
                    id: AtomicU32::new(u32::MAX),
                });
                v.insert(slot.clone());
                slot
            }
        }
    }
}

impl<K> VisitedSet<K> {
    /// Empties shards `part`, `part + parts`, ...: workers free the
    /// visited states in parallel at the end of a search.
    pub fn clear(&self, part: usize, parts: usize) {
        for shard in self.shards.iter().skip(part).step_by(parts.max(1)) {
            let map = std::mem::take(&mut *shard.lock().expect("visited-set shard"));
            drop(map);
        }
    }
}
