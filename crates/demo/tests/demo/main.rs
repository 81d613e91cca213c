//! The demo target's integration tests, in one test binary: its endpoints over real sockets,
//! and its accept backlog under load from the project's load generator.

mod backlog;
mod endpoints;
mod protocols;
