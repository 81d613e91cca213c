//! Opening an HTML report in headless Chromium (tests/report/chromium.sh, in a network
//! namespace of its own) and reading the screenshots back: is anything drawn, and is each
//! chart there.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{ensure, Context as _};

/// The colour of a report's first series (the first entry of the charts' palette).
pub const FIRST_SERIES: [u8; 3] = [31, 119, 180];

/// What a screenshot holds.
#[derive(Debug)]
pub struct Shot {
    /// The PNG file.
    pub path: PathBuf,
    /// Share of pixels that are not (near) white.
    pub ink: f64,
    /// Distinct colours, quantized to 4 bits per channel.
    pub colours: usize,
    /// Pixels within a small distance of [`FIRST_SERIES`].
    pub first_series_pixels: usize,
}

/// The `id`s of the report's `<figure class="chart">` elements, in page order.
pub fn chart_ids(html: &str) -> Vec<String> {
    html.split("<figure class=\"chart\" id=\"")
        .skip(1)
        .filter_map(|s| s.split_once('"').map(|p| p.0.to_string()))
        .collect()
}

/// Screenshots of the whole page (`page`) and of every chart alone, by chart id.
pub fn screenshots(html: &Path, dir: &Path) -> anyhow::Result<Vec<(String, Shot)>> {
    let text = std::fs::read_to_string(html).with_context(|| html.display().to_string())?;
    let ids = chart_ids(&text);
    let status = Command::new(script())
        .arg(html)
        .arg(dir)
        .args(&ids)
        .status()
        .context("tests/report/chromium.sh")?;
    ensure!(
        status.success(),
        "tests/report/chromium.sh failed: {status}"
    );
    std::iter::once("page".to_string())
        .chain(ids)
        .map(|id| {
            let shot = read(&dir.join(format!("{id}.png")))?;
            Ok((id, shot))
        })
        .collect()
}

/// `tests/report/chromium.sh`, looked for from the tested crate's directory upwards: this file
/// is also compiled into the CLI crate's trend test (crates/cli/tests/trend_browser.rs), whose
/// working directory is crates/cli.
fn script() -> PathBuf {
    let crate_dir = std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(PathBuf::new, PathBuf::from);
    crate_dir
        .ancestors()
        .map(|d| d.join("tests/report/chromium.sh"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("tests/report/chromium.sh"))
}

/// Reads a PNG and counts what is drawn on it.
pub fn read(path: &Path) -> anyhow::Result<Shot> {
    let file = std::fs::File::open(path).with_context(|| path.display().to_string())?;
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info()?;
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf)?;
    let channels = info.color_type.samples();
    ensure!(channels >= 3, "{}: not an RGB image", path.display());
    let pixels = buf[..info.buffer_size()].chunks_exact(channels);
    let total = (info.width * info.height) as usize;
    let mut ink = 0;
    let mut first = 0;
    let mut colours = std::collections::HashSet::new();
    for p in pixels {
        let (r, g, b) = (p[0], p[1], p[2]);
        if r.min(g).min(b) < 235 {
            ink += 1;
        }
        colours.insert((r >> 4, g >> 4, b >> 4));
        let d = |a: u8, b: u8| (i32::from(a) - i32::from(b)).abs();
        if d(r, FIRST_SERIES[0]) + d(g, FIRST_SERIES[1]) + d(b, FIRST_SERIES[2]) <= 30 {
            first += 1;
        }
    }
    Ok(Shot {
        path: path.to_path_buf(),
        ink: ink as f64 / total.max(1) as f64,
        colours: colours.len(),
        first_series_pixels: first,
    })
}
