//! `seeds-doc [OUT_DIR] [--claims FILE]`: prints `docs/seeds.md` rendered from the result files
//! of one `hack/seeds.sh` run in OUT_DIR (`manifest.json` and the `<seed>.run.json` it names)
//! and the claims file (default `examples/seeds/claims/claims.yaml`). Without OUT_DIR, or
//! with no `manifest.json` in it, the page says the seeds have not run yet. Run through
//! `hack/seeds-doc.sh OUT_DIR > docs/seeds.md`.

use std::path::PathBuf;

use anyhow::{bail, Context as _};
use kubectl_benchrun::seeds_doc::{read_run_files, render, ClaimsFile, RunFiles};

fn main() -> anyhow::Result<()> {
    let mut out_dir: Option<PathBuf> = None;
    let mut claims = PathBuf::from("examples/seeds/claims/claims.yaml");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--claims" => claims = args.next().context("--claims needs a file")?.into(),
            "-h" | "--help" => {
                println!("usage: seeds-doc [OUT_DIR] [--claims FILE] > docs/seeds.md");
                return Ok(());
            }
            _ if a.starts_with('-') => {
                bail!("unknown option {a} (seeds-doc [OUT_DIR] [--claims FILE])")
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
    print!("{}", render(&claims, &files));
    Ok(())
}
