//! What text may go into a log line or an Event. Pure.
//!
//! A log line or an Event names what was done (kind, name, size), never a payload: the planner's
//! actions are logged by [`crate::plan::Action::describe`], and any text a user controls (an
//! apiserver's or Prometheus's message quoting the spec, an extra query, an error) is cut to a
//! bound with [`cap`] before it is logged or recorded.

use std::borrow::Cow;

/// Longest user-controlled text in one log field, in bytes.
pub const LOG_MAX: usize = 512;

/// Longest Event note, in bytes: the apiserver refuses an `events.k8s.io/v1` note over 1 KiB.
pub const EVENT_MAX: usize = 1024;

/// `text` when it has at most `max` bytes; else its longest prefix (on a character boundary)
/// that leaves room for a marker saying how many bytes were cut, followed by that marker, so
/// the result never exceeds `max` bytes (unless `max` is too small for the marker itself).
pub fn cap(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    // The marker's length depends on the count it reports, which depends on the cut: the
    // count's digits are at most those of the whole length, so reserve that many.
    let reserve = marker(text.len()).len();
    let mut end = max.saturating_sub(reserve);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}{}", &text[..end], marker(text.len() - end)))
}

/// The marker [`cap`] puts where it cut `cut` bytes.
fn marker(cut: usize) -> String {
    format!("… [{cut} bytes cut]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_within_the_bound_is_kept_whole_and_borrowed() {
        assert!(matches!(cap("short", 5), Cow::Borrowed("short")));
        assert_eq!(cap("", 0), "");
    }

    #[test]
    fn longer_text_is_cut_to_the_bound_with_a_marker_saying_how_much_went() {
        let text = "x".repeat(10_000);
        let capped = cap(&text, 100);
        assert!(capped.len() <= 100, "{} bytes", capped.len());
        let kept = capped.find('…').unwrap();
        assert_eq!(&capped[kept..], format!("… [{} bytes cut]", 10_000 - kept));
        assert!(text.starts_with(&capped[..kept]));
    }

    #[test]
    fn a_cut_never_splits_a_character() {
        // Three bytes each: most cut points fall inside one.
        let text = "€".repeat(2_000);
        for max in 30..60 {
            let capped = cap(&text, max);
            assert!(capped.len() <= max, "{max}: {} bytes", capped.len());
            let kept = &capped[..capped.find('…').unwrap()];
            assert!(kept.chars().all(|c| c == '€'), "{max}: {kept:?}");
        }
    }

    #[test]
    fn an_event_note_of_multibyte_text_stays_within_what_the_apiserver_accepts() {
        // 1000 characters, 3000 bytes: what taking 1000 characters used to send.
        let note = "ü€".repeat(500);
        assert!(cap(&note, EVENT_MAX).len() <= EVENT_MAX);
    }
}
