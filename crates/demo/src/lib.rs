//! benchrun-demo: a small HTTP server (HTTP/1.1; h2c and TLS with HTTP/1.1 and h2 on extra
//! ports) that stands in for the systems under test of
//! benchrun's examples (the Node/Java images of the published comparisons).
//!
//! Endpoints: `/hello` (small JSON), `/compute?n=` (primes below `n` by trial division),
//! `/sleep?ms=`, `/alloc?mb=` (allocates and holds memory), `/docs/{id}` (an in-memory
//! document store: `PUT` and `GET`), `/upstream/docs/{id}` (the same document read from
//! another demo target, `--upstream`), `/healthz` and `/stats` (requests served per path and
//! per `X-Benchrun-Cell` header value). See `docs/demo-target.md`.

pub mod compute;
pub mod listen;
pub mod query;
pub mod server;
pub mod stats;
pub mod store;
pub mod tls;
pub mod upstream;

pub use server::{serve, serve_all, Mode, ServeOptions};
