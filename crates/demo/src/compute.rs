//! The CPU-bound work behind `/compute` (pure).

/// Counts the primes strictly below `n` by trial division.
///
/// Deliberately naive: it is the algorithm the published Node/Java comparisons used
/// (`for (j = 2; j * j <= i; j++) if (i % j == 0) ...`), so the demo target does the same
/// amount of work per request as the images it stands in for.
pub fn count_primes_below(n: u64) -> u64 {
    (2..n).filter(|&i| is_prime(i)).count() as u64
}

fn is_prime(i: u64) -> bool {
    let mut d = 2;
    while d * d <= i {
        if i % d == 0 {
            return false;
        }
        d += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_no_primes_below_three_except_two() {
        assert_eq!(count_primes_below(0), 0);
        assert_eq!(count_primes_below(1), 0);
        assert_eq!(count_primes_below(2), 0);
        assert_eq!(count_primes_below(3), 1);
    }

    #[test]
    fn counts_primes_below_known_bounds() {
        assert_eq!(count_primes_below(10), 4);
        assert_eq!(count_primes_below(100), 25);
        assert_eq!(count_primes_below(10_000), 1229);
        assert_eq!(count_primes_below(100_000), 9592);
    }

    #[test]
    fn squares_of_primes_are_not_prime() {
        assert!(!is_prime(49));
        assert!(!is_prime(121));
        assert!(is_prime(97));
    }
}
