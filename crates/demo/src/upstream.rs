//! The client side of `/upstream/docs/{id}`: fetching documents from another demo target
//! (`--upstream HOST:PORT`) over a pool of kept-alive HTTP/1.1 connections.

use std::error::Error as StdError;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper::http::uri::Authority;
use hyper::{StatusCode, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};

/// How long a fetch may take, connect and whole body included, unless configured otherwise.
pub const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest upstream response body passed on; a larger one is a bad gateway.
pub const MAX_UPSTREAM_BODY: usize = 1 << 20;
/// How long an unused pooled connection stays open.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The address of an upstream demo target: `HOST:PORT`, without scheme or path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream(Authority);

/// A `--upstream` value that is not `HOST:PORT`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("upstream {0:?} must be HOST:PORT, e.g. store:8080 or 10.0.0.7:8080")]
pub struct BadUpstream(String);

impl FromStr for Upstream {
    type Err = BadUpstream;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || BadUpstream(text.to_owned());
        let authority: Authority = text.parse().map_err(|_| bad())?;
        let usable = !authority.as_str().contains('@')
            && !authority.host().is_empty()
            && authority.port_u16().is_some();
        if usable {
            Ok(Upstream(authority))
        } else {
            Err(bad())
        }
    }
}

impl fmt::Display for Upstream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.as_str())
    }
}

/// Why the upstream gave no usable response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpstreamError {
    /// Connecting, sending or reading failed, or the response was unusable.
    #[error("upstream {upstream}: {reason}")]
    Failed {
        /// The upstream asked.
        upstream: String,
        /// What went wrong, with the underlying causes.
        reason: String,
    },
    /// No complete response within the timeout.
    #[error("upstream {upstream}: no complete response within {timeout:?}")]
    Timeout {
        /// The upstream asked.
        upstream: String,
        /// The timeout that passed.
        timeout: Duration,
    },
}

impl UpstreamError {
    /// The status to answer with: 502 for a failure, 504 for a timeout.
    pub fn status(&self) -> StatusCode {
        match self {
            UpstreamError::Failed { .. } => StatusCode::BAD_GATEWAY,
            UpstreamError::Timeout { .. } => StatusCode::GATEWAY_TIMEOUT,
        }
    }
}

/// A client of one upstream, created once and shared: clones share the connection pool.
#[derive(Debug, Clone)]
pub struct UpstreamClient {
    upstream: Upstream,
    client: Client<HttpConnector, Empty<Bytes>>,
    timeout: Duration,
}

impl UpstreamClient {
    /// A client of `upstream` whose fetches give up after `timeout`.
    pub fn new(upstream: Upstream, timeout: Duration) -> Self {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let client = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .build(connector);
        UpstreamClient {
            upstream,
            client,
            timeout,
        }
    }

    /// Fetches `GET /docs/{id}` from the upstream: its status and body, whatever the status.
    /// The caller checks `id` with [`crate::store::check_id`].
    pub async fn get_doc(&self, id: &str) -> Result<(StatusCode, Bytes), UpstreamError> {
        let uri: Uri = format!("http://{}/docs/{id}", self.upstream)
            .parse()
            .map_err(|err| self.failed(&err))?;
        tokio::time::timeout(self.timeout, self.fetch(uri))
            .await
            .unwrap_or_else(|_| {
                Err(UpstreamError::Timeout {
                    upstream: self.upstream.to_string(),
                    timeout: self.timeout,
                })
            })
    }

    async fn fetch(&self, uri: Uri) -> Result<(StatusCode, Bytes), UpstreamError> {
        let response = self.client.get(uri).await.map_err(|e| self.failed(&e))?;
        let status = response.status();
        let body = Limited::new(response.into_body(), MAX_UPSTREAM_BODY)
            .collect()
            .await
            .map_err(|e| self.failed(&*e))?;
        Ok((status, body.to_bytes()))
    }

    fn failed(&self, err: &(dyn StdError + 'static)) -> UpstreamError {
        UpstreamError::Failed {
            upstream: self.upstream.to_string(),
            reason: error_chain(err),
        }
    }
}

/// `err` and its sources, joined by `": "` (hyper's own messages name only the stage).
fn error_chain(err: &(dyn StdError + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_host_and_port() {
        for text in ["store:8080", "10.0.0.7:80", "[::1]:8080", "a.b.svc:1"] {
            let upstream: Upstream = text.parse().unwrap();
            assert_eq!(upstream.to_string(), text);
        }
    }

    #[test]
    fn refuses_anything_but_host_and_port() {
        for text in [
            "",
            "store",
            ":8080",
            "http://store:8080",
            "store:8080/docs",
            "user@store:8080",
            "store:port",
        ] {
            assert_eq!(
                text.parse::<Upstream>(),
                Err(BadUpstream(text.to_owned())),
                "{text}"
            );
        }
    }

    #[test]
    fn failures_are_bad_gateways_and_timeouts_gateway_timeouts() {
        let failed = UpstreamError::Failed {
            upstream: "s:1".into(),
            reason: "refused".into(),
        };
        assert_eq!(failed.status(), StatusCode::BAD_GATEWAY);
        assert_eq!(failed.to_string(), "upstream s:1: refused");
        let timeout = UpstreamError::Timeout {
            upstream: "s:1".into(),
            timeout: Duration::from_secs(10),
        };
        assert_eq!(timeout.status(), StatusCode::GATEWAY_TIMEOUT);
        assert_eq!(
            timeout.to_string(),
            "upstream s:1: no complete response within 10s"
        );
    }

    #[derive(Debug)]
    struct Connect(std::io::Error);

    impl fmt::Display for Connect {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("tcp connect error")
        }
    }

    impl StdError for Connect {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn error_chain_names_every_cause() {
        let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        assert_eq!(error_chain(&Connect(refused)), "tcp connect error: refused");
        let plain = "x".parse::<u8>().unwrap_err();
        assert_eq!(error_chain(&plain), "invalid digit found in string");
    }
}
