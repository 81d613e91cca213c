package benchrun.common;

/** The {@code /compute} work: primes below n by naive trial division, as the comparisons did. */
public final class Primes {
    public static final long MAX_N = 10_000_000L;
    public static final long DEFAULT_N = 10_000L;

    private Primes() {}

    /** n is at most {@link #MAX_N}, so int arithmetic cannot overflow (j * j <= about 1.0e7). */
    public static long countBelow(long n) {
        int limit = (int) n;
        long count = 0;
        for (int i = 2; i < limit; i++) {
            boolean prime = true;
            for (int j = 2; j * j <= i; j++) {
                if (i % j == 0) {
                    prime = false;
                    break;
                }
            }
            if (prime) {
                count++;
            }
        }
        return count;
    }

    /**
     * Parses the {@code n} query parameter: absent means {@link #DEFAULT_N}; anything but a
     * decimal integer in 0..=MAX_N gives -1.
     */
    public static long parseN(String raw) {
        if (raw == null) {
            return DEFAULT_N;
        }
        return parseBounded(raw, MAX_N);
    }

    /** A decimal integer of digits only in 0..=max, or -1. */
    public static long parseBounded(String raw, long max) {
        if (raw.isEmpty() || raw.length() > 18) {
            return -1;
        }
        long value = 0;
        for (int k = 0; k < raw.length(); k++) {
            char c = raw.charAt(k);
            if (c < '0' || c > '9') {
                return -1;
            }
            value = value * 10 + (c - '0');
        }
        return value <= max ? value : -1;
    }
}
