//! What a run asks of the protocol: HTTP/1.1 or HTTP/2, and how TLS checks the server. Data
//! only, read by the configuration ([`crate::config`]) and by the protocol worker
//! ([`crate::proto`]), which depends on the configuration in turn.

use std::path::PathBuf;

/// The application protocol of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// HTTP/1.1 (over TLS for `https://` targets, by ALPN `http/1.1`).
    #[default]
    Http1,
    /// HTTP/2: over TLS by ALPN `h2` for `https://`, with prior knowledge (h2c) for `http://`.
    H2,
}

impl Protocol {
    /// The name in results and accepted by `--protocol`: `http1` or `h2`.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Http1 => "http1",
            Protocol::H2 => "h2",
        }
    }

    /// The ALPN identifier.
    pub fn alpn(self) -> &'static [u8] {
        match self {
            Protocol::Http1 => b"http/1.1",
            Protocol::H2 => b"h2",
        }
    }
}

/// How the generator checks the server (`https://` targets).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// The name sent as SNI and checked against the certificate; default: the URL's host.
    pub server_name: Option<String>,
    /// PEM file of the CA certificates to trust instead of the Mozilla set.
    pub ca_file: Option<PathBuf>,
    /// Accept any certificate (self-signed targets). Explicit: never a default.
    pub insecure_skip_verify: bool,
}
