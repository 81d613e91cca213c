//! Rounding of the figures the operator writes to a run's status.
//!
//! Pure and dependency-free, so that the Prometheus client and the result assembly both use it
//! without importing each other.

/// `x` rounded to `decimals` decimal places (half away from zero).
pub fn round(x: f64, decimals: i32) -> f64 {
    let f = 10f64.powi(decimals);
    (x * f).round() / f
}

#[cfg(test)]
mod tests {
    use super::round;

    #[test]
    fn rounds_half_away_from_zero_to_the_given_places() {
        assert_eq!(round(0.123_45, 4), 0.1235);
        assert_eq!(round(-0.123_45, 4), -0.1235);
        assert_eq!(round(2.5, 0), 3.0);
        assert_eq!(round(1234.0, -2), 1200.0);
    }
}
