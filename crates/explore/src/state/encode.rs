//! The compact state encoding: a stored state is one flat byte array (one
//! allocation, hashed and compared as a slice), decoded only when the search
//! expands it. Numbers are LEB128 varints (signed ones zigzagged), so the
//! small pcs, ids, counts and lengths that make up most of a state take a
//! byte each. Successors are encoded into a reused buffer, so a
//! successor seen before costs no allocation at all.
//!
//! The format is private to this module: `decode(encode(s)) == s` for every
//! state (tested on every state the corpus reaches), and equal states have
//! equal encodings (every field is written in a fixed order, lengths first),
//! so comparing encodings is comparing states.

use crate::state::{BState, Fan, HEvent, HKind, JoinMask, Members, Phase, State, Status, TState};
use bc_graph::bits::Bits;
use bc_graph::{ArriveCount, BarrierId, LocId, Target};

struct W<'a> {
    out: &'a mut Vec<u8>,
    /// The member lists written so far (`state::Members`), by address and
    /// by value: a list is written once, in full, where it first occurs,
    /// and as its number in this table after that.
    lists: Lists<'a>,
}

/// The member lists an encoding has written, numbered in order of first
/// occurrence. Lists are matched by value (the address only finds a
/// shared list faster), so where lists are shared does not show in the
/// encoding: equal states still have equal encodings.
#[derive(Default)]
struct Lists<'a> {
    by_addr: std::collections::HashMap<*const Vec<(u32, u32)>, u32>,
    by_value: std::collections::HashMap<&'a [(u32, u32)], u32>,
}

impl<'a> W<'a> {
    fn new(out: &'a mut Vec<u8>) -> Self {
        W {
            out,
            lists: Lists::default(),
        }
    }
    /// A member list: its number when written before (below the count
    /// written), else the count and then the list.
    fn members(&mut self, l: &'a Members) {
        let addr = std::sync::Arc::as_ptr(l);
        if let Some(&i) = self.lists.by_addr.get(&addr) {
            return self.u(i);
        }
        let next = self.lists.by_value.len() as u32;
        let i = *self.lists.by_value.entry(l.as_slice()).or_insert(next);
        self.lists.by_addr.insert(addr, i);
        self.u(i);
        if i == next {
            self.pairs(l);
        }
    }
    fn phase(&mut self, p: &'a Phase) {
        self.u(p.number);
        self.members(&p.members);
        self.joins(&p.mask);
        self.bits(&p.bound);
        self.i(p.arrivals);
        self.i(p.preds);
        self.count(p.count);
        match p.site {
            Some(s) => {
                self.u(1);
                self.pair(s);
            }
            None => self.u(0),
        }
        self.b(p.mixed_sites);
        self.b(p.exit_drop);
        self.bits(&p.strays);
        self.u(p.vals.len() as u32);
        for v in &p.vals {
            self.u(v.thread);
            self.u(u32::from(v.form));
            self.i(v.value);
        }
    }
}

impl W<'_> {
    /// LEB128: seven bits a byte, low first, high bit set on all but the
    /// last (most fields are small: one byte).
    fn var(&mut self, mut x: u64) {
        while x >= 0x80 {
            self.out.push(x as u8 | 0x80);
            x >>= 7;
        }
        self.out.push(x as u8);
    }
    fn u(&mut self, x: u32) {
        self.var(x as u64);
    }
    fn b(&mut self, x: bool) {
        self.out.push(x as u8);
    }
    /// Zigzag, so small negative numbers stay short.
    fn i(&mut self, x: i64) {
        self.var(((x << 1) ^ (x >> 63)) as u64);
    }
    fn len(&mut self, n: usize) {
        self.var(n as u64);
    }
    fn oi(&mut self, x: Option<i64>) {
        match x {
            Some(v) => {
                self.u(1);
                self.i(v);
            }
            None => self.u(0),
        }
    }
    /// A phase count: 0 none, 1 the block, 2 and a thread count.
    fn count(&mut self, x: Option<ArriveCount>) {
        match x {
            None => self.u(0),
            Some(ArriveCount::Block) => self.u(1),
            Some(ArriveCount::Threads(k)) => {
                self.u(2);
                self.i(k);
            }
        }
    }
    fn ou(&mut self, x: Option<u32>) {
        match x {
            Some(v) => {
                self.u(1);
                self.u(v);
            }
            None => self.u(0),
        }
    }
    fn pair(&mut self, (a, b): (u32, u32)) {
        self.u(a);
        self.u(b);
    }
    fn pairs(&mut self, v: &[(u32, u32)]) {
        self.len(v.len());
        for &p in v {
            self.pair(p);
        }
    }
    fn us(&mut self, v: &[u32]) {
        self.len(v.len());
        for &x in v {
            self.u(x);
        }
    }
    /// A bit set as its word count and runs of equal words (word, run
    /// length): the join masks of T threads are T words of T bits each,
    /// nearly all of them all ones or all zeros, so a state's masks take
    /// about T bytes instead of T^2 / 8.
    fn bits(&mut self, b: &Bits) {
        let w = b.as_words();
        self.len(w.len());
        let mut i = 0;
        while i < w.len() {
            let x = w[i];
            let run = w[i..].iter().take_while(|&&y| y == x).count();
            self.var(x);
            self.len(run);
            i += run;
        }
    }
    /// A join mask: its runs, each as the gap from the previous run's end
    /// and its length.
    fn joins(&mut self, m: &JoinMask) {
        self.len(m.runs().len());
        let mut at = 0;
        for &(s, e) in m.runs() {
            self.u(s - at);
            self.u(e - s);
            at = e;
        }
    }
    fn target(&mut self, t: Target) {
        match t {
            Target::Barrier(b) => self.pair((0, b.0)),
            Target::Loc(l) => self.pair((1, l.0)),
            Target::None => self.pair((2, 0)),
        }
    }
}

/// Appends the encoding of `s` to `out`.
pub(crate) fn encode(s: &State, out: &mut Vec<u8>) {
    let mut w = W::new(out);
    w.len(s.threads.len());
    for t in &s.threads {
        w.u(t.pc);
        w.u(t.status as u32);
        w.b(t.started);
        w.len(t.regs.len());
        for &r in &t.regs {
            w.i(r);
        }
        w.joins(&t.jmask);
        w.us(&t.joined);
        w.len(t.owes.len());
        for &(b, n) in &t.owes {
            w.u(b);
            w.u(n);
        }
    }
    w.len(s.mem.len());
    for &m in &s.mem {
        w.i(m);
    }
    w.len(s.bars.len());
    for b in &s.bars {
        w.b(b.init);
        w.i(b.expected);
        w.i(b.arrived);
        w.i(b.pending_drop);
        w.i(b.tx);
        w.b(b.invalid);
        w.oi(b.base);
        w.u(b.settled_len);
        w.u(b.phase_base);
        w.i(b.after_completion);
        w.len(b.cuts.len());
        for &(len, expected, number) in &b.cuts {
            w.u(len);
            w.i(expected);
            w.u(number);
        }
        w.u(b.next_phase);
        w.u(b.returned);
        w.u(b.epoch_start);
        w.len(b.abandoned.len());
        for &n in &b.abandoned {
            w.u(n);
        }
        match &b.open {
            Some(p) => {
                w.u(1);
                w.phase(p);
            }
            None => w.u(0),
        }
        w.len(b.done.len());
        for p in &b.done {
            w.phase(p);
        }
    }
    w.len(s.hist.len());
    for evs in &s.hist {
        w.len(evs.len());
        for e in evs {
            w.u(e.pc);
            w.target(e.target);
            w.u(e.kind.tag().into());
            match &e.kind {
                HKind::Init(k) | HKind::Tx(k) => w.i(*k),
                HKind::Arrive(k, c, n) => {
                    w.oi(*k);
                    w.count(*c);
                    w.u(*n);
                }
                HKind::ArriveDrop(positive) => w.b(*positive),
                HKind::Wait {
                    participants,
                    token_phase,
                    parity,
                    took,
                } => {
                    w.members(participants);
                    w.ou(*token_phase);
                    w.ou(parity.map(u32::from));
                    w.ou(*took);
                }
                HKind::NoEffect(op) => w.u(*op as u32),
                HKind::Fence(scope) => w.u(*scope as u32),
                HKind::Join | HKind::Drop | HKind::Read | HKind::Write | HKind::Inval => {}
            }
        }
    }
    w.len(s.bmo.len());
    for o in &s.bmo {
        w.pairs(o);
    }
    w.len(s.launched.len());
    for &l in &s.launched {
        w.b(l);
    }
    w.len(s.streams.len());
    for (id, q) in &s.streams {
        w.i(*id);
        w.us(q);
    }
    w.len(s.extra.len());
    for f in &s.extra {
        w.pairs(&f.sources);
        w.pairs(&f.targets);
    }
}

struct R<'a> {
    w: &'a [u8],
    at: usize,
    /// The member lists read so far, by number ([`W::members`]).
    lists: Vec<Members>,
}

impl R<'_> {
    fn var(&mut self) -> u64 {
        let mut x = 0u64;
        let mut shift = 0;
        loop {
            let b = self.w[self.at];
            self.at += 1;
            x |= ((b & 0x7f) as u64) << shift;
            if b < 0x80 {
                return x;
            }
            shift += 7;
        }
    }
    fn u(&mut self) -> u32 {
        self.var() as u32
    }
    fn b(&mut self) -> bool {
        let x = self.w[self.at];
        self.at += 1;
        x != 0
    }
    fn i(&mut self) -> i64 {
        let z = self.var();
        ((z >> 1) as i64) ^ -((z & 1) as i64)
    }
    fn len(&mut self) -> usize {
        self.u() as usize
    }
    fn oi(&mut self) -> Option<i64> {
        self.b().then(|| self.i())
    }
    fn ou(&mut self) -> Option<u32> {
        self.b().then(|| self.u())
    }
    fn count(&mut self) -> Option<ArriveCount> {
        match self.u() {
            0 => None,
            1 => Some(ArriveCount::Block),
            _ => Some(ArriveCount::Threads(self.i())),
        }
    }
    fn pair(&mut self) -> (u32, u32) {
        (self.u(), self.u())
    }
    fn pairs(&mut self) -> Vec<(u32, u32)> {
        let n = self.len();
        (0..n).map(|_| self.pair()).collect()
    }
    /// A member list: shared with the lists of the same number.
    fn members(&mut self) -> Members {
        let i = self.len();
        if i < self.lists.len() {
            return self.lists[i].clone();
        }
        let l = Members::new(self.pairs());
        self.lists.push(l.clone());
        l
    }
    fn us(&mut self) -> Vec<u32> {
        let n = self.len();
        (0..n).map(|_| self.u()).collect()
    }
    fn bits(&mut self) -> Bits {
        let n = self.len();
        let mut words = Vec::with_capacity(n);
        while words.len() < n {
            let x = self.var();
            let run = self.len();
            words.extend(std::iter::repeat_n(x, run));
        }
        Bits::from_words(&words)
    }
    fn joins(&mut self) -> JoinMask {
        let n = self.len();
        let mut runs = Vec::with_capacity(n);
        let mut at = 0;
        for _ in 0..n {
            let s = at + self.u();
            let e = s + self.u();
            runs.push((s, e));
            at = e;
        }
        JoinMask::from_runs(runs)
    }
    fn target(&mut self) -> Target {
        match self.pair() {
            (0, b) => Target::Barrier(BarrierId(b)),
            (1, l) => Target::Loc(LocId(l)),
            _ => Target::None,
        }
    }
    fn event(&mut self) -> HEvent {
        let pc = self.u();
        let target = self.target();
        let kind = match self.u() {
            0 => HKind::Init(self.i()),
            1 => HKind::Join,
            2 => HKind::Drop,
            3 => HKind::Arrive(self.oi(), self.count(), self.u()),
            4 => HKind::ArriveDrop(self.b()),
            5 => HKind::Wait {
                participants: self.members(),
                token_phase: self.ou(),
                parity: self.ou().map(|p| p as u8),
                took: self.ou(),
            },
            6 => HKind::Tx(self.i()),
            7 => HKind::Read,
            8 => HKind::Write,
            9 => HKind::Inval,
            11 => HKind::Fence(FENCE_SCOPES[self.u() as usize]),
            _ => HKind::NoEffect(bc_graph::BarrierOpName::ALL[self.u() as usize]),
        };
        HEvent { pc, kind, target }
    }
}

/// The fence scopes by their number (`FenceScope as u32`).
const FENCE_SCOPES: [bc_graph::FenceScope; 6] = {
    use bc_graph::FenceScope::*;
    [Cta, Cluster, Gpu, Sys, ProxyAsync, MbarrierInit]
};

/// The state `encode` wrote into `words`.
pub(crate) fn decode(words: &[u8]) -> State {
    let mut s = State {
        threads: Vec::new(),
        mem: Vec::new(),
        bars: Vec::new(),
        hist: Vec::new(),
        bmo: Vec::new(),
        launched: Vec::new(),
        streams: Vec::new(),
        extra: Vec::new(),
    };
    decode_into(words, &mut s);
    s
}

impl R<'_> {
    fn pairs_into(&mut self, v: &mut Vec<(u32, u32)>) {
        let n = self.len();
        v.clear();
        v.extend((0..n).map(|_| self.pair()));
    }
    fn us_into(&mut self, v: &mut Vec<u32>) {
        let n = self.len();
        v.clear();
        v.extend((0..n).map(|_| self.u()));
    }
    fn phase_into(&mut self, p: &mut Phase) {
        p.number = self.u();
        p.members = self.members();
        p.mask = self.joins();
        p.bound = self.bits();
        p.arrivals = self.i();
        p.preds = self.i();
        p.count = self.count();
        p.site = self.b().then(|| self.pair());
        p.mixed_sites = self.b();
        p.exit_drop = self.b();
        p.strays = self.bits();
        let n = self.u();
        p.vals.clear();
        for _ in 0..n {
            let thread = self.u();
            let form = self.u() as u8;
            p.vals.push(crate::state::LaneValue {
                thread,
                form,
                value: self.i(),
            });
        }
    }
}

fn empty_phase() -> Phase {
    Phase::new(0, Bits::default())
}

/// [`decode`] into an existing state, reusing its vectors: the explorer
/// decodes every state it expands into one per worker, so expanding
/// allocates nothing but what a larger state needs.
pub(crate) fn decode_into(words: &[u8], s: &mut State) {
    let mut r = R {
        w: words,
        at: 0,
        lists: Vec::new(),
    };
    let nt = r.len();
    s.threads.resize_with(nt, || TState {
        pc: 0,
        status: Status::Running,
        regs: Vec::new(),
        jmask: JoinMask::default(),
        joined: Vec::new(),
        owes: Vec::new(),
        started: false,
    });
    for t in &mut s.threads {
        t.pc = r.u();
        t.status = match r.u() {
            0 => Status::Running,
            1 => Status::Done,
            _ => Status::NotLaunched,
        };
        t.started = r.b();
        let nr = r.len();
        t.regs.clear();
        t.regs.extend((0..nr).map(|_| r.i()));
        t.jmask = r.joins();
        r.us_into(&mut t.joined);
        let n = r.len();
        t.owes.clear();
        t.owes.extend((0..n).map(|_| (r.u(), r.u())));
    }
    let nm = r.len();
    s.mem.clear();
    s.mem.extend((0..nm).map(|_| r.i()));
    let nb = r.len();
    s.bars.resize_with(nb, || BState::at_launch(None));
    for b in &mut s.bars {
        b.init = r.b();
        b.expected = r.i();
        b.arrived = r.i();
        b.pending_drop = r.i();
        b.tx = r.i();
        b.invalid = r.b();
        b.base = r.oi();
        b.settled_len = r.u();
        b.phase_base = r.u();
        b.after_completion = r.i();
        let n = r.len();
        b.cuts.clear();
        for _ in 0..n {
            let len = r.u();
            let expected = r.i();
            b.cuts.push((len, expected, r.u()));
        }
        b.next_phase = r.u();
        b.returned = r.u();
        b.epoch_start = r.u();
        let n = r.len();
        b.abandoned.clear();
        for _ in 0..n {
            b.abandoned.push(r.u());
        }
        if r.b() {
            r.phase_into(b.open.get_or_insert_with(empty_phase));
        } else {
            b.open = None;
        }
        let n = r.len();
        b.done.resize_with(n, empty_phase);
        for p in &mut b.done {
            r.phase_into(p);
        }
    }
    let nh = r.len();
    s.hist.resize_with(nh, Vec::new);
    for evs in &mut s.hist {
        let n = r.len();
        evs.clear();
        for _ in 0..n {
            evs.push(r.event());
        }
    }
    let no = r.len();
    s.bmo.resize_with(no, Vec::new);
    for o in &mut s.bmo {
        r.pairs_into(o);
    }
    let nl = r.len();
    s.launched.clear();
    s.launched.extend((0..nl).map(|_| r.b()));
    let ns = r.len();
    s.streams.clear();
    s.streams.extend((0..ns).map(|_| (r.i(), r.us())));
    let ne = r.len();
    s.extra.resize_with(ne, || Fan {
        sources: Vec::new(),
        targets: Vec::new(),
    });
    for f in &mut s.extra {
        r.pairs_into(&mut f.sources);
        r.pairs_into(&mut f.targets);
    }
    debug_assert_eq!(r.at, words.len(), "the whole encoding is read");
}
