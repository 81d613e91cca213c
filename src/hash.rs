//! The one stable hash of the operator: FNV-1a, in 32 bits (child-name suffixes, the names of
//! runs a schedule's trigger makes) or 64 bits (the seed of a measurement's template values).
//! Stable across releases and platforms, unlike the standard library's `DefaultHasher`, so a
//! run keeps its child names and draws the same values on any build; a dozen lines do not
//! need a crate (the `fnv` crate has no 32-bit variant, and the names must not change).

/// A width of FNV-1a: its offset basis and prime.
pub trait Width: Copy {
    /// The offset basis.
    const OFFSET: Self;
    /// One step: xor the byte in, multiply by the prime (wrapping).
    fn step(self, byte: u8) -> Self;
}

impl Width for u32 {
    const OFFSET: u32 = 0x811c_9dc5;
    fn step(self, byte: u8) -> u32 {
        (self ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    }
}

impl Width for u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    fn step(self, byte: u8) -> u64 {
        (self ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    }
}

/// FNV-1a of `bytes` in the width `W`.
pub fn fnv1a<W: Width>(bytes: impl IntoIterator<Item = u8>) -> W {
    bytes.into_iter().fold(W::OFFSET, W::step)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_published_test_vectors_hold_in_both_widths() {
        // From the FNV reference test suite (draft-eastlake-fnv).
        assert_eq!(fnv1a::<u32>(*b""), 0x811c_9dc5);
        assert_eq!(fnv1a::<u32>(*b"a"), 0xe40c_292c);
        assert_eq!(fnv1a::<u32>(*b"foobar"), 0xbf9c_f968);
        assert_eq!(fnv1a::<u64>(*b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a::<u64>(*b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a::<u64>(*b"foobar"), 0x8594_4171_f739_67e8);
    }

    /// The values the hand-written functions this replaced gave (computed with them): running
    /// runs keep their child names and trigger-run names across the change (the seeds: see
    /// `builders::load`'s tests).
    #[test]
    fn names_and_trigger_runs_are_what_they_were() {
        assert_eq!(crate::names::job_name("demo", 0, 0), "demo-c0-r0-4902");
        assert_eq!(fnv1a::<u32>("2026-12-07T01:00".bytes()), 0x29ee_6d12);
    }
}
