//! Query-string parsing for the demo endpoints (pure).

/// A query parameter that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    /// The value is not a non-negative integer.
    #[error("parameter {name} must be a non-negative integer, got {value:?}")]
    Invalid {
        /// Parameter name.
        name: &'static str,
        /// The raw value as sent.
        value: String,
    },
    /// The value is above the endpoint's bound.
    #[error("parameter {name} must be at most {max}, got {value}")]
    TooLarge {
        /// Parameter name.
        name: &'static str,
        /// The parsed value.
        value: u64,
        /// The largest accepted value.
        max: u64,
    },
}

/// Returns the raw value of the first `name=value` pair in `query`, if any.
///
/// Values are not percent-decoded: every parameter of the demo target is an integer.
pub fn param<'a>(query: Option<&'a str>, name: &str) -> Option<&'a str> {
    query?.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (key == name).then_some(value)
    })
}

/// Parses parameter `name` as an integer in `0..=max`, or returns `default` when it is absent.
pub fn bounded_u64(
    query: Option<&str>,
    name: &'static str,
    default: u64,
    max: u64,
) -> Result<u64, ParamError> {
    let Some(raw) = param(query, name) else {
        return Ok(default);
    };
    let value: u64 = raw.parse().map_err(|_| ParamError::Invalid {
        name,
        value: raw.to_owned(),
    })?;
    if value > max {
        return Err(ParamError::TooLarge { name, value, max });
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_parameter_among_others() {
        assert_eq!(param(Some("a=1&n=42&b"), "n"), Some("42"));
        assert_eq!(param(Some("b&n"), "n"), Some(""));
        assert_eq!(param(Some("nn=1"), "n"), None);
        assert_eq!(param(None, "n"), None);
    }

    #[test]
    fn absent_parameter_takes_the_default() {
        assert_eq!(bounded_u64(None, "n", 7, 10), Ok(7));
        assert_eq!(bounded_u64(Some("x=1"), "n", 7, 10), Ok(7));
    }

    #[test]
    fn accepts_values_up_to_the_bound() {
        assert_eq!(bounded_u64(Some("n=0"), "n", 7, 10), Ok(0));
        assert_eq!(bounded_u64(Some("n=10"), "n", 7, 10), Ok(10));
    }

    #[test]
    fn rejects_values_above_the_bound() {
        assert_eq!(
            bounded_u64(Some("n=11"), "n", 7, 10),
            Err(ParamError::TooLarge {
                name: "n",
                value: 11,
                max: 10
            })
        );
    }

    #[test]
    fn rejects_non_integers() {
        for bad in ["n=", "n=-1", "n=1.5", "n=abc", "n=99999999999999999999999"] {
            assert!(
                matches!(
                    bounded_u64(Some(bad), "n", 7, 10),
                    Err(ParamError::Invalid { .. })
                ),
                "{bad}"
            );
        }
    }
}
