//! Phase tokens as register values (a `cuda::barrier` arrival token, an
//! `mbarrier.arrive` state): the phase number and the barrier in one
//! integer, which travels through registers and memory like any other.

/// A phase token as a register value: the phase number and the barrier.
pub fn encode_token(barrier: usize, phase: u32) -> i64 {
    ((phase as i64) << 20) | (barrier as i64 + 1)
}

/// The barrier and phase a register value names, when it has the shape of a
/// token: any integer is accepted (tokens travel through registers and
/// memory and can be changed by arithmetic), and only a value that
/// [`encode_token`] gives back exactly decodes. The barrier index is not
/// checked against the program: callers must (see `System::wait_plan`).
pub fn decode_token(v: i64) -> Option<(usize, u32)> {
    let b = (v & 0xfffff) - 1;
    if v <= 0 || b < 0 {
        return None;
    }
    let phase = u32::try_from(v >> 20).ok()?;
    (encode_token(b as usize, phase) == v).then_some((b as usize, phase))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Any integer decodes without a panic; only what `encode_token` gives
    /// decodes to a token.
    #[test]
    fn decode_token_takes_any_integer() {
        for v in [i64::MIN, i64::MIN + 1, -1, 0, 1 << 20, i64::MAX, 0xfffff, (1 << 52) | 1] {
            if let Some((b, p)) = decode_token(v) {
                assert_eq!(encode_token(b, p), v);
            }
        }
        assert_eq!(decode_token(0), None);
        assert_eq!(decode_token(-1), None);
        assert_eq!(decode_token(i64::MIN), None);
        assert_eq!(decode_token(1 << 20), None);
        // A phase number above u32::MAX is no token (it used to truncate).
        assert_eq!(decode_token((1 << 52) | 1), None);
        for (b, p) in [(0, 0), (3, 7), (0xffffe, u32::MAX)] {
            assert_eq!(decode_token(encode_token(b, p)), Some((b, p)));
        }
    }
}
