//! The benchrun report CLI (`kubectl benchrun`): renderers for `list`, `show`, `watch`,
//! `compare`, `export`, `chart`, `report` and `trend`, and the thin client layer that feeds them.
//!
//! Every renderer is a pure function writing into any [`std::io::Write`]; only
//! [`client`] talks to the cluster.

pub mod chart;
pub mod client;
pub mod compare;
pub mod export;
pub mod intervals;
pub mod list;
pub mod num;
pub mod report;
pub mod seeds_doc;
pub mod show;
pub mod table;
pub mod trend;
pub mod watch;

#[cfg(test)]
pub(crate) mod fixtures;

/// Output formats of `show`, `compare`, `export` and `trend`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns for a terminal.
    Text,
    /// GitHub-flavoured Markdown.
    Markdown,
    /// Comma-separated values with a header row.
    Csv,
    /// JSON.
    Json,
}
