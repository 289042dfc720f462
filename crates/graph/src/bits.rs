//! A fixed-size bitset (executes-before closures, join masks). Sets of up to
//! 128 bits live inline: explorer states and state-graph nodes hold several
//! per thread and phase, and allocating each one dominated the search.

#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Bits {
    small: [u64; 2],
    /// The words of a set of more than 128 bits (then `small` stays zero).
    large: Vec<u64>,
}

impl Bits {
    pub fn new(n: usize) -> Bits {
        let words = n.div_ceil(64);
        Bits {
            small: [0; 2],
            large: if words > 2 { vec![0; words] } else { Vec::new() },
        }
    }
    fn words(&self) -> &[u64] {
        if self.large.is_empty() {
            &self.small
        } else {
            &self.large
        }
    }
    fn words_mut(&mut self) -> &mut [u64] {
        if self.large.is_empty() {
            &mut self.small
        } else {
            &mut self.large
        }
    }
    /// The set's words (two for an inline set), for compact encodings.
    pub fn as_words(&self) -> &[u64] {
        self.words()
    }
    /// The set with these words (as [`Bits::as_words`] gave them).
    pub fn from_words(words: &[u64]) -> Bits {
        if words.len() > 2 {
            Bits {
                small: [0; 2],
                large: words.to_vec(),
            }
        } else {
            let mut small = [0; 2];
            small[..words.len()].copy_from_slice(words);
            Bits {
                small,
                large: Vec::new(),
            }
        }
    }
    pub fn set(&mut self, i: usize) {
        self.words_mut()[i / 64] |= 1 << (i % 64);
    }
    pub fn clear(&mut self, i: usize) {
        self.words_mut()[i / 64] &= !(1 << (i % 64));
    }
    pub fn get(&self, i: usize) -> bool {
        self.words().get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
    /// The heap bytes the set takes.
    pub fn bytes(&self) -> usize {
        self.large.len() * 8
    }
    /// How many bits are set.
    pub fn count(&self) -> usize {
        self.words().iter().map(|w| w.count_ones() as usize).sum()
    }
    pub fn union_with(&mut self, o: &Bits) {
        for (a, b) in self.words_mut().iter_mut().zip(o.words()) {
            *a |= b;
        }
    }
    /// Whether the two sets share an element.
    pub fn meets(&self, o: &Bits) -> bool {
        self.words().iter().zip(o.words()).any(|(a, b)| a & b != 0)
    }
    /// The elements, in increasing order.
    pub fn ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.words().iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                (w != 0).then(|| {
                    let b = w.trailing_zeros() as usize;
                    w &= w - 1;
                    i * 64 + b
                })
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Bits;

    #[test]
    fn small_and_large_sets_behave_alike() {
        for n in [3, 64, 100, 128, 129, 300] {
            let mut a = Bits::new(n);
            let mut b = Bits::new(n);
            a.set(0);
            a.set(n - 1);
            b.set(n / 2);
            assert!(a.get(0) && a.get(n - 1) && !a.get(n / 2) && !a.get(n + 500));
            a.union_with(&b);
            assert!(a.get(n / 2));
            a.clear(0);
            assert!(!a.get(0));
            assert_eq!(a.bytes(), if n > 128 { n.div_ceil(64) * 8 } else { 0 });
            assert_eq!(a.ones().collect::<Vec<_>>(), vec![n / 2, n - 1]);
            assert!(a.meets(&b));
            b.clear(n / 2);
            b.set(0);
            assert!(!a.meets(&b) && !Bits::new(n).meets(&a));
        }
    }
}
