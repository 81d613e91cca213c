//! `docs/seeds.md`, generated: the five published comparisons read claim by claim against the
//! result files of one `make seeds` run (`hack/seeds.sh` writes `manifest.json` and one
//! `<seed>.run.json` per seed) and the committed claims file
//! (`examples/seeds/claims/claims.yaml`). Pure: [`render`] takes the parsed inputs and returns
//! the page, so the same files always give the same page; `src/bin/seeds-doc.rs` does the I/O.

mod claims;
mod render;
mod verdict;
mod wire;

#[cfg(test)]
mod tests;

pub use claims::{
    Claim, ClaimsFile, Comparison, Expect, Metric, Original, SeedClaims, Selector, Substitution,
};
pub use render::{judge_claim, render, render_with, Judged, Row};
pub use verdict::{judge, values, Verdict};

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context as _;

use benchrun_api::BenchmarkRun;
use serde::Deserialize;

/// `manifest.json` of one `hack/seeds.sh` invocation.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// The commit the run was made from.
    pub commit: String,
    /// Whether the work tree had uncommitted changes.
    #[serde(default)]
    pub dirty: bool,
    /// When the first seed started (UTC, RFC 3339).
    pub started: String,
    /// When the last seed finished.
    pub finished: String,
    /// `small` or `published`.
    #[serde(default)]
    pub size: String,
    /// The machine: kernel, CPUs, memory.
    pub machine: String,
    /// The cluster's nodes.
    #[serde(default)]
    pub layout: Layout,
    /// Every seed that ran.
    #[serde(default)]
    pub seeds: Vec<SeedRun>,
}

/// The cluster's layout at the time of the run.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Layout {
    /// One entry per node.
    #[serde(default)]
    pub nodes: Vec<Node>,
}

/// A node of the cluster.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Node {
    /// Its name.
    pub name: String,
    /// Its `benchrun.dev/role` label (empty when unlabelled).
    #[serde(default)]
    pub role: String,
    /// Allocatable CPU.
    #[serde(default)]
    pub cpu: String,
    /// Allocatable memory.
    #[serde(default)]
    pub memory: String,
    /// Kubelet version.
    #[serde(default)]
    pub kubelet: String,
}

/// One seed of the manifest.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
pub struct SeedRun {
    /// The seed's number (1 to 5).
    pub number: u32,
    /// The example file that ran.
    pub file: String,
    /// The run's final phase.
    pub phase: String,
    /// Wall-clock seconds of the seed.
    pub seconds: u64,
    /// `equal` when every target's count matched the generator's, else `DIFFERENT`.
    pub counts: String,
    /// The run's JSON, relative to the manifest.
    pub results: String,
}

/// The inputs of one page: the manifest and the runs it names (by seed number), or nothing
/// when no run exists yet.
#[derive(Clone, Debug, Default)]
pub struct RunFiles {
    /// The manifest, when a run exists.
    pub manifest: Option<Manifest>,
    /// Each seed's BenchmarkRun as `kubectl get -o json` saved it.
    pub runs: BTreeMap<u32, BenchmarkRun>,
}

/// The manifest of `dir` and every run it names; nothing when `dir` has no `manifest.json`
/// (the page then says "not run yet"). A run file that cannot be read leaves its seed without
/// figures (noted on stderr); one that is not a BenchmarkRun is an error.
pub fn read_run_files(dir: &Path) -> anyhow::Result<RunFiles> {
    let path = dir.join("manifest.json");
    if !path.exists() {
        eprintln!(
            "seeds-doc: no {}: the page says the seeds have not run yet",
            path.display()
        );
        return Ok(RunFiles::default());
    }
    let manifest: Manifest = serde_json::from_str(&std::fs::read_to_string(&path)?)
        .with_context(|| format!("{} is not a seeds manifest", path.display()))?;
    let mut files = RunFiles::default();
    for s in &manifest.seeds {
        let p = dir.join(&s.results);
        let text = match std::fs::read_to_string(&p) {
            Ok(t) => t,
            Err(e) => {
                eprintln!(
                    "seeds-doc: seed {}: {} unreadable ({e}); its claims show no figure",
                    s.number,
                    p.display()
                );
                continue;
            }
        };
        let run: BenchmarkRun = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a BenchmarkRun", p.display()))?;
        files.runs.insert(s.number, run);
    }
    files.manifest = Some(manifest);
    Ok(files)
}
