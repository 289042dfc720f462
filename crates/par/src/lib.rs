//! The concurrent core of parallel exploration: workers claim chunks of a
//! batch from a shared counter until none is left, their results are put
//! back in chunk order, and the states they reach are interned in a shared,
//! sharded visited set.
//!
//! The visited set gives equal states one slot, whoever interns first; only
//! the merging thread numbers slots, in frontier order, so state numbers,
//! the first finding of each kind and its witness are the same whatever the
//! number of jobs. Slots and encodings live in per-shard arenas (no
//! allocation per state) and are reached through plain pointer handles (no
//! reference count to write when a state is met again); the arenas are
//! freed only after the search. The explorer (`bc-explore`) reaches it as
//! `state::par`. The loom model tests (`tests/loom.rs`, `--features
//! loom`) check that each chunk is claimed exactly once,
//! the merge is in order, and equal keys get one slot, for every
//! interleaving of small cases.

#[cfg(feature = "loom")]
use loom::sync::atomic::{AtomicUsize, Ordering};
use std::ptr::NonNull;
#[cfg(not(feature = "loom"))]
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

#[cfg(feature = "loom")]
use loom::sync::{atomic::AtomicU32, Mutex};
#[cfg(not(feature = "loom"))]
use std::sync::{atomic::AtomicU32, Mutex};

/// A handle on a visited state's slot: a plain pointer, copied with no
/// reference count, so meeting a state again writes no shared cache line.
/// The slot lives as long as the set keeps it: slots sit in arena chunks
/// that never move, and only [`VisitedSet::clear`] or the set's drop frees
/// them, which is why [`SlotRef::get`] is `unsafe`.
pub struct SlotRef<K>(NonNull<Slot<K>>);

impl<K> Clone for SlotRef<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for SlotRef<K> {}

// SAFETY: a handle gives shared access to a `Slot<K>` (its key read-only,
// its number atomic), which is fine from any thread when `K: Sync`.
unsafe impl<K: Sync> Send for SlotRef<K> {}
unsafe impl<K: Sync> Sync for SlotRef<K> {}

impl<K> SlotRef<K> {
    /// The slot.
    ///
    /// # Safety
    /// The set that made this handle is alive and has not been cleared
    /// since.
    pub unsafe fn get(&self) -> &Slot<K> {
        // SAFETY: the caller's promise keeps the arena chunk alive.
        unsafe { self.0.as_ref() }
    }
    /// Whether two handles name the same slot.
    pub fn ptr_eq(a: SlotRef<K>, b: SlotRef<K>) -> bool {
        a.0 == b.0
    }
}

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

/// A byte string stored in a shard's byte arena (a state's encoding): no
/// allocation of its own. Not `Clone`: it is reached only through its slot,
/// so it cannot outlive the arena unless a handle is misused.
pub struct Bytes {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the bytes are immutable once written.
unsafe impl Send for Bytes {}
unsafe impl Sync for Bytes {}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr..ptr + len` was copied into an arena chunk that lives
        // as long as the slot holding this `Bytes` (they are freed together).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::borrow::Borrow<[u8]> for Bytes {
    fn borrow(&self) -> &[u8] {
        self
    }
}

impl PartialEq for Bytes {
    fn eq(&self, other: &Bytes) -> bool {
        **self == **other
    }
}

/// Arena chunk sizes: a shard's first chunks are small (a small search
/// touches many shards with a few states each), and each chunk doubles the
/// last up to the largest size (slots, and bytes unless one key is larger).
const SLOT_CHUNK: (usize, usize) = (16, 4096);
const BYTE_CHUNK: (usize, usize) = (1 << 10, 1 << 20);

/// The last chunk of an arena, after starting a new one if it has no room
/// for `need` more items. The new chunk doubles the last one's capacity
/// within `(small, large)`, or holds `need` if that is more. A chunk never
/// grows past its capacity, so what is appended to it never moves: this is
/// what makes the arenas' pointers stable.
fn room<T>(chunks: &mut Vec<Vec<T>>, need: usize, (small, large): (usize, usize)) -> &mut Vec<T> {
    if chunks.last().is_none_or(|c| c.capacity() - c.len() < need) {
        let cap = chunks.last().map_or(small, |c| (c.capacity() * 2).clamp(small, large));
        chunks.push(Vec::with_capacity(cap.max(need)));
    }
    chunks.last_mut().expect("a chunk with room")
}

/// A shard's storage: the table points into chunks that are only appended
/// to (a chunk never reallocates: it is filled up to its capacity and then
/// a new one starts), so slots and bytes never move.
struct Shard<K> {
    table: hashbrown::HashTable<NonNull<Slot<K>>>,
    slots: Vec<Vec<Slot<K>>>,
    bytes: Vec<Vec<u8>>,
}

// SAFETY: the pointers in `table` point into `slots`, owned by the shard;
// the shard moves between threads only whole, behind its mutex.
unsafe impl<K: Send> Send for Shard<K> {}

impl<K> Default for Shard<K> {
    fn default() -> Self {
        Shard {
            table: hashbrown::HashTable::new(),
            slots: Vec::new(),
            bytes: Vec::new(),
        }
    }
}

impl<K> Shard<K> {
    /// The slot of a key that `eq` accepts, among those with hash `hash`.
    fn find(&self, hash: u64, eq: impl Fn(&K) -> bool) -> Option<NonNull<Slot<K>>> {
        // SAFETY: the table's pointers point into `self.slots`, alive and
        // unmoved while `self` is borrowed.
        let found = self.table.find(hash, |s| {
            let s = unsafe { s.as_ref() };
            s.hash == hash && eq(&s.key)
        });
        found.copied()
    }

    /// Adds a new unnumbered slot for `key` (not in the table yet).
    fn add(&mut self, hash: u64, key: K) -> NonNull<Slot<K>> {
        let chunk = room(&mut self.slots, 1, SLOT_CHUNK);
        let at = chunk.len();
        chunk.push(Slot {
            key,
            hash,
            id: AtomicU32::new(u32::MAX),
        });
        // SAFETY: `at` is the element just pushed; the chunk had room, so
        // it did not reallocate and never will (`room`).
        let ptr = unsafe { NonNull::new_unchecked(chunk.as_mut_ptr().add(at)) };
        // SAFETY: as in `find`.
        self.table.insert_unique(hash, ptr, |s| unsafe { s.as_ref() }.hash);
        ptr
    }
}

/// Where a new key's bytes go: [`VisitedSet::intern_ref`] hands `make` the
/// shard's byte arena.
pub struct ByteArena<'a>(&'a mut Vec<Vec<u8>>);

impl ByteArena<'_> {
    /// Copies `b` into the arena.
    pub fn store(&mut self, b: &[u8]) -> Bytes {
        let chunk = room(self.0, b.len(), BYTE_CHUNK);
        let at = chunk.len();
        chunk.extend_from_slice(b);
        Bytes {
            // SAFETY: `at` is within the chunk, which did not reallocate
            // (it had room for `b`) and never will (`room`).
            ptr: unsafe { NonNull::new_unchecked(chunk.as_mut_ptr().add(at)) },
            len: b.len(),
        }
    }
}

/// The shared visited set: workers intern the states they reach (equal
/// states share one slot, whoever came first), so duplicates are found in
/// parallel; numbers are given by the merging thread alone, in frontier
/// order, which keeps them independent of the workers' timing. A new state
/// costs no allocation of its own: its slot and its encoding are appended
/// to its shard's arenas.
pub struct VisitedSet<K> {
    shards: Vec<Padded<Mutex<Shard<K>>>>,
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
                .map(|_| Padded(Mutex::new(Shard::default())))
                .collect(),
        }
    }

    /// The slot of a key equal to `key` (with hash `hash`): the existing one
    /// when an equal key was interned before, else a new unnumbered one
    /// holding `make(key, arena)` (so a duplicate costs no copy, and a new
    /// key's bytes can go to the shard's byte arena).
    pub fn intern_ref<Q: ?Sized + PartialEq>(
        &self,
        hash: u64,
        key: &Q,
        make: impl FnOnce(&Q, &mut ByteArena) -> K,
    ) -> SlotRef<K>
    where
        K: std::borrow::Borrow<Q>,
    {
        let mut shard = self.shard(hash);
        if let Some(found) = shard.find(hash, |k| k.borrow() == key) {
            return SlotRef(found);
        }
        let made = make(key, &mut ByteArena(&mut shard.bytes));
        SlotRef(shard.add(hash, made))
    }

    /// The slot of `key` (with hash `hash`): the existing one when an equal
    /// key was interned before, else a new unnumbered one.
    pub fn intern(&self, hash: u64, key: K) -> SlotRef<K> {
        let mut shard = self.shard(hash);
        match shard.find(hash, |k| *k == key) {
            Some(found) => SlotRef(found),
            None => SlotRef(shard.add(hash, key)),
        }
    }

    /// The locked shard of a hash (its high bits; the table uses the low).
    fn shard(&self, hash: u64) -> impl std::ops::DerefMut<Target = Shard<K>> + '_ {
        self.shards[((hash >> 48) as usize) % self.shards.len()]
            .lock()
            .expect("visited-set shard")
    }
}

impl<K> VisitedSet<K> {
    /// Empties shards `part`, `part + parts`, ...: workers free the
    /// visited states in parallel at the end of a search.
    ///
    /// # Safety
    /// No handle on a slot of these shards is used ([`SlotRef::get`])
    /// after this.
    pub unsafe fn clear(&self, part: usize, parts: usize) {
        for shard in self.shards.iter().skip(part).step_by(parts.max(1)) {
            let old = std::mem::take(&mut *shard.lock().expect("visited-set shard"));
            drop(old);
        }
    }
}
