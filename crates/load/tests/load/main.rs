//! The load generator's integration tests, in one test binary (one link instead of six): the
//! library and the `benchrun-load` binary against small std::net servers on 127.0.0.1.

mod common;

mod backend;
mod cli;
mod h2wire;
mod loopback;
mod pacing;
mod scenarios;
mod steady;
mod templates;
mod window;
