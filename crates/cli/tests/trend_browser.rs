//! The trend page (`kubectl benchrun trend SCHEDULE -o FILE.html`) opened in headless Chromium,
//! as the e2e suite opens a run's report (tests/report/chromium.sh, in a network namespace with
//! nothing but loopback), but rendered from the fixture schedule
//! (tests/fixtures/schedule/nightly.yaml.snap, the unit tests' insta snapshot of their
//! fixture), so no cluster is needed. It checks that the page is not blank, that every chart
//! is there and drawn, and that the intervals' band and the change markers show where the
//! fixture has them and nowhere else.
//!
//! Needs Chromium (the script installs Debian's package when missing) and root for the network
//! namespace, so it is ignored by a plain `cargo test`; `make browser` (part of `make test`)
//! runs it:
//!
//! ```text
//! cargo test --release --workspace --test trend_browser -- --ignored --nocapture
//! ```
//!
//! The page and the screenshots stay in /tmp/benchrun-trend-browser/.

#[path = "../../../tests/e2e/browser.rs"]
mod browser;

use std::path::{Path, PathBuf};

use anyhow::{ensure, Context as _};
use benchrun_api::schedule::BenchmarkSchedule;
use kubectl_benchrun::trend;

/// The band: the first series' colour at 20 % opacity over white.
const BAND: [u8; 3] = [210, 228, 240];
/// A change for the worse (the palette's red).
const WORSE: [u8; 3] = [214, 39, 40];
/// A change for the better (the palette's green).
const BETTER: [u8; 3] = [44, 160, 44];

/// Pixels of the PNG within a small distance of `rgb`.
fn pixels_near(path: &Path, rgb: [u8; 3]) -> anyhow::Result<usize> {
    let file = std::fs::File::open(path).with_context(|| path.display().to_string())?;
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info()?;
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf)?;
    let channels = info.color_type.samples();
    let d = |a: u8, b: u8| (i32::from(a) - i32::from(b)).abs();
    Ok(buf[..info.buffer_size()]
        .chunks_exact(channels)
        .filter(|p| d(p[0], rgb[0]) + d(p[1], rgb[1]) + d(p[2], rgb[2]) <= 30)
        .count())
}

/// The content of an insta snapshot file: what follows its `---` front matter.
fn snapshot_content(snap: &str) -> Option<&str> {
    let rest = snap.strip_prefix("---\n")?;
    let end = rest.find("\n---\n")?;
    Some(&rest[end + 5..])
}

#[test]
#[ignore = "needs headless Chromium and root (a network namespace): make browser"]
fn the_trend_page_renders_in_headless_chromium() -> anyhow::Result<()> {
    let crate_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").context("cargo test")?);
    let fixture = crate_dir.join("tests/fixtures/schedule/nightly.yaml.snap");
    let snap = std::fs::read_to_string(&fixture).with_context(|| fixture.display().to_string())?;
    let yaml = snapshot_content(&snap).context("an insta snapshot: `---` front matter")?;
    let schedule: BenchmarkSchedule = serde_yaml::from_str(yaml)?;

    let dir = PathBuf::from("/tmp/benchrun-trend-browser");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("trend.html");
    let mut html = Vec::new();
    let charts = trend::write_trend_html(&mut html, &schedule, "2026-12-14T08:00:00Z")?;
    std::fs::write(&path, &html)?;
    let ids = browser::chart_ids(&String::from_utf8(html)?);
    println!("{charts} charts: {ids:?}");
    ensure!(
        ids.len() == 4 && charts == 4,
        "a chart per cell and figure: {ids:?}"
    );

    for (id, shot) in browser::screenshots(&path, &dir)? {
        let png = shot.path.display();
        let (band, worse, better) = (
            pixels_near(&shot.path, BAND)?,
            pixels_near(&shot.path, WORSE)?,
            pixels_near(&shot.path, BETTER)?,
        );
        println!(
            "{id}: {:.1}% ink, {} colours, {} median-line pixels, {band} band, {worse} worse, {better} better",
            shot.ink * 100.0,
            shot.colours,
            shot.first_series_pixels
        );
        ensure!(
            shot.ink > 0.02 && shot.colours >= 8,
            "{png} looks blank: {shot:?}"
        );
        ensure!(
            shot.first_series_pixels >= 50,
            "{png}: no median line drawn: {shot:?}"
        );
        if id == "page" {
            continue;
        }
        ensure!(band >= 1000, "{png}: no band ({band} pixels)");
        // The fixture's changes: both figures of demo/hello for the worse, the throughput of
        // demo/compute for the better; its p99 has none.
        let (want_worse, want_better) = match id.as_str() {
            i if i.starts_with("chart-demo-hello-") => (true, false),
            i if i.ends_with("-throughput") => (false, true),
            _ => (false, false),
        };
        ensure!(
            (worse >= 200) == want_worse && (want_worse || worse < 20),
            "{png}: {worse} pixels of a change for the worse"
        );
        ensure!(
            (better >= 100) == want_better && (want_better || better < 20),
            "{png}: {better} pixels of a change for the better"
        );
    }
    Ok(())
}
