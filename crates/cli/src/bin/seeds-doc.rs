//! `seeds-doc [OUT_DIR] [--second DIR] [--claims FILE]`: prints `docs/seeds.md` rendered from
//! the result files of one `hack/seeds.sh` run in OUT_DIR (`manifest.json` and the
//! `<seed>.run.json` it names) and the claims file (default
//! `examples/seeds/claims/claims.yaml`); with `--second`, a second run of the same commit marks
//! the claims whose verdict differs between the two as unstable. Without OUT_DIR, or
//! with no `manifest.json` in it, the page says the seeds have not run yet. Run through
//! `hack/seeds-doc.sh OUT_DIR > docs/seeds.md`.

use std::path::PathBuf;

use anyhow::{bail, Context as _};
use kubectl_benchrun::seeds_doc::{read_run_files, render_with, ClaimsFile, RunFiles};

fn main() -> anyhow::Result<()> {
    let mut out_dir: Option<PathBuf> = None;
    let mut claims = PathBuf::from("examples/seeds/claims/claims.yaml");
    let mut second: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--claims" => claims = args.next().context("--claims needs a file")?.into(),
            "--second" => second = Some(args.next().context("--second needs a directory")?.into()),
            "-h" | "--help" => {
                println!(
                    "usage: seeds-doc [OUT_DIR] [--second DIR] [--claims FILE] > docs/seeds.md"
                );
                return Ok(());
            }
            _ if a.starts_with('-') => {
                bail!("unknown option {a} (seeds-doc [OUT_DIR] [--second DIR] [--claims FILE])")
            }
            _ if out_dir.is_none() => out_dir = Some(a.into()),
            _ => bail!("one OUT_DIR only (got {a} too)"),
        }
    }
    let claims: ClaimsFile = serde_yaml::from_str(
        &std::fs::read_to_string(&claims)
            .with_context(|| format!("reading {}", claims.display()))?,
    )
    .with_context(|| format!("{} is not a claims file", claims.display()))?;
    let files = match out_dir {
        Some(dir) => read_run_files(&dir)?,
        None => RunFiles::default(),
    };
    let second = match second {
        Some(dir) => Some(read_run_files(&dir)?),
        None => None,
    };
    if let (Some(a), Some(b)) = (
        files.manifest.as_ref(),
        second.as_ref().and_then(|s| s.manifest.as_ref()),
    ) {
        if a.commit != b.commit {
            bail!(
                "the second run is of commit {} and the first of {}: stability compares two runs of one commit",
                b.commit,
                a.commit
            );
        }
    }
    print!("{}", render_with(&claims, &files, second.as_ref()));
    Ok(())
}
