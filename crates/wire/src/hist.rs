//! HDR histogram helpers: the fixed bounds every histogram in a result uses, and the
//! base64(V2 + deflate) encoding that lets results from several load pods merge exactly.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer as _, V2DeflateSerializer};
use hdrhistogram::Histogram;

use crate::error::{Error, Result};

/// Lowest recordable latency, in microseconds.
pub const LOWEST_US: u64 = 1;
/// Highest recordable latency, in microseconds (60 s); larger values are clamped.
pub const HIGHEST_US: u64 = 60_000_000;
/// Significant digits of the overall latency and connect histograms.
pub const SIGFIG: u8 = 3;
/// Significant digits of the per-second timeline histograms (kept small on purpose).
pub const TIMELINE_SIGFIG: u8 = 2;

/// A new, empty latency histogram (µs, 1 µs..60 s, 3 significant digits).
pub fn new_latency() -> Histogram<u64> {
    new_with_sigfig(SIGFIG)
}

/// A new, empty per-second timeline histogram (µs, 1 µs..60 s, 2 significant digits).
pub fn new_timeline() -> Histogram<u64> {
    new_with_sigfig(TIMELINE_SIGFIG)
}

fn new_with_sigfig(sigfig: u8) -> Histogram<u64> {
    // The bounds are constants that hdrhistogram accepts, so this cannot fail.
    Histogram::new_with_bounds(LOWEST_US, HIGHEST_US, sigfig).expect("valid histogram bounds")
}

/// Encodes a histogram as base64 of its HDR V2 deflate serialization.
pub fn encode(hist: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    // Serializing into a Vec only fails on internal invariants of hdrhistogram.
    V2DeflateSerializer::new()
        .serialize(hist, &mut buf)
        .expect("serialize histogram into memory");
    base64::engine::general_purpose::STANDARD.encode(buf)
}

/// Decodes a histogram written by [`encode`] (or by any HDR V2/V2-deflate writer).
pub fn decode(text: &str) -> Result<Histogram<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| Error::BadHistogram(e.to_string()))?;
    let mut hist: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| Error::BadHistogram(format!("{e:?}")))?;
    hist.auto(true);
    Ok(hist)
}

/// Adds `src` into `dst`, growing `dst` if `src` holds values beyond its range.
pub fn add(dst: &mut Histogram<u64>, src: &Histogram<u64>) -> Result<()> {
    dst.auto(true);
    dst.add(src)
        .map_err(|e| Error::BadHistogram(format!("{e:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_histogram_decodes_to_the_same_counts() {
        let mut h = new_latency();
        for v in [1, 10, 100, 1_000, 123_456, 59_000_000] {
            h.record(v).unwrap();
        }
        let back = decode(&encode(&h)).unwrap();
        assert_eq!(back.len(), h.len());
        assert_eq!(back.max(), h.max());
        assert_eq!(back.value_at_quantile(0.5), h.value_at_quantile(0.5));
    }

    #[test]
    fn garbage_is_rejected_not_panicking() {
        assert!(decode("not base64!").is_err());
        assert!(decode("aGVsbG8=").is_err());
    }
}
