//! `spec.timeouts`: how long a cell's steps may take.

use std::time::Duration;

use super::field::{parse_duration, FieldError};
use crate::spec::Timeouts;

/// `spec.timeouts`, parsed with their defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimeoutsPlan {
    /// How long a target may take to become ready (default 3m).
    pub ready: Duration,
    /// Grace beyond the expected load time before a Job counts as stuck (default 2m).
    pub load_grace: Duration,
}

/// Parses `spec.timeouts`.
pub(crate) fn parse(timeouts: Option<&Timeouts>, e: &mut Vec<FieldError>) -> TimeoutsPlan {
    let t = timeouts.cloned().unwrap_or_default();
    TimeoutsPlan {
        ready: parse_duration("spec.timeouts.ready", t.ready.as_deref().unwrap_or("3m"), e),
        load_grace: parse_duration(
            "spec.timeouts.loadGrace",
            t.load_grace.as_deref().unwrap_or("2m"),
            e,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_default_to_three_and_two_minutes() {
        let mut e = Vec::new();
        let t = parse(None, &mut e);
        assert_eq!(
            (t.ready, t.load_grace),
            (Duration::from_secs(180), Duration::from_secs(120))
        );
        let bad = Timeouts {
            ready: Some("soon".into()),
            load_grace: Some("30s".into()),
        };
        assert_eq!(
            parse(Some(&bad), &mut e).load_grace,
            Duration::from_secs(30)
        );
        assert_eq!(e[0].field, "spec.timeouts.ready");
    }
}
