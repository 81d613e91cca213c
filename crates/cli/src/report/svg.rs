//! Chart specifications and their rendering to SVG with `plotters`.
//!
//! A chart is described by plain data ([`LineChart`], [`BarChart`]) built elsewhere from the
//! run; this module only draws. Axes are linear in the values they are given: a logarithmic
//! axis is a linear one over `log2`/`log10` of the values, labelled back in the original unit
//! by [`Scale`], so every chart uses one coordinate type and the ticks fall on round values.
//! A line chart may carry an [`Overlay`] (intervals as bands, segment means, change markers)
//! and per-point tooltips: the trend page's charts.

use plotters::coord::Shift;
use plotters::prelude::*;

pub use super::overlay::{Band, Level, Marker, Overlay};

/// Width of every chart in pixels.
pub const WIDTH: u32 = 880;
/// Height of every chart in pixels.
pub const HEIGHT: u32 = 400;

/// Series colours (Tableau 10), in the order series are listed; the HTML legend uses the same.
pub const PALETTE: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
];

/// The colour of series `i` as `#rrggbb`.
pub fn color_hex(i: usize) -> String {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    format!("#{r:02x}{g:02x}{b:02x}")
}

fn color(i: usize) -> RGBColor {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    RGBColor(r, g, b)
}

/// How an axis maps values to positions and labels its ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Values as they are.
    Linear,
    /// Values as they are, ticks only at whole numbers: ordinals (the runs of a schedule).
    Ordinal,
    /// Positions are `log2(value)`; ticks at powers of two (connection counts).
    Log2,
    /// Positions are `log10(1 / (1 - q))` of a quantile `q`; ticks at 0 %, 90 %, 99 %, …
    Percentile,
}

impl Scale {
    /// The axis position of a value (`None` where the scale has none, e.g. `log2(0)`).
    pub fn position(self, v: f64) -> Option<f64> {
        let p = match self {
            Scale::Linear | Scale::Ordinal => v,
            Scale::Log2 if v > 0.0 => v.log2(),
            Scale::Percentile if (0.0..1.0).contains(&v) => (1.0 / (1.0 - v)).log10(),
            _ => return None,
        };
        p.is_finite().then_some(p)
    }

    /// The tick label at axis position `p` (empty between the round positions of a log scale).
    pub fn label(self, p: f64) -> String {
        let whole = (p - p.round()).abs() < 1e-9;
        match self {
            Scale::Linear => short(p),
            Scale::Ordinal if whole => format!("{}", p.round()),
            Scale::Log2 if whole => short(2f64.powf(p.round())),
            Scale::Percentile if whole => {
                let q = 100.0 * (1.0 - 10f64.powf(-p.round()));
                format!("{}%", short(q))
            }
            _ => String::new(),
        }
    }
}

/// A number with at most three significant decimals and no trailing zeros, `k`/`M` above
/// ten thousand: tick labels.
pub fn short(v: f64) -> String {
    let a = v.abs();
    let (v, suffix) = if a >= 1e7 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    let s = if s == "-0" { "0" } else { s };
    format!("{s}{suffix}")
}

/// One line (or set of markers) of a [`LineChart`].
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// `(x, y)` in the axes' units (before [`Scale::position`]); drawn in this order.
    pub points: Vec<(f64, f64)>,
    /// Dashed line (a baseline run's series).
    pub dashed: bool,
    /// Markers only, no line (measured points under a fitted curve).
    pub markers_only: bool,
    /// Markers on the line's points.
    pub markers: bool,
    /// A tooltip per point (same order as `points`), shown when the pointer rests on it;
    /// empty for none.
    pub tips: Vec<String>,
}

impl Series {
    /// A solid line with markers.
    pub fn line(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series {
            name: name.into(),
            points,
            dashed: false,
            markers_only: false,
            markers: true,
            tips: Vec::new(),
        }
    }
}

/// A chart of lines over two numeric axes.
#[derive(Clone, Debug, PartialEq)]
pub struct LineChart {
    /// Anchor id in the page (`chart-…`).
    pub id: String,
    /// Heading above the chart.
    pub title: String,
    /// One sentence under the heading: what is drawn and from which figures.
    pub note: String,
    /// X axis description.
    pub x_label: String,
    /// X axis scale.
    pub x_scale: Scale,
    /// Y axis description.
    pub y_label: String,
    /// The lines; series `i` has colour [`color_hex`]`(i)`.
    pub series: Vec<Series>,
    /// Bands, segment means and change markers drawn with the lines (none in a run's report).
    pub overlay: Overlay,
}

/// Grouped vertical bars over categories, with an optional horizontal reference line.
#[derive(Clone, Debug, PartialEq)]
pub struct BarChart {
    /// Anchor id in the page (`chart-…`).
    pub id: String,
    /// Heading above the chart.
    pub title: String,
    /// One sentence under the heading.
    pub note: String,
    /// Y axis description.
    pub y_label: String,
    /// Category labels along the x axis.
    pub categories: Vec<String>,
    /// Bar groups: a legend name and one value per category (`None`: no bar).
    pub groups: Vec<(String, Vec<Option<f64>>)>,
    /// A horizontal line at this value, drawn in red (the limit).
    pub reference: Option<f64>,
}

/// A chart of either kind.
#[derive(Clone, Debug, PartialEq)]
pub enum Chart {
    /// Lines.
    Line(LineChart),
    /// Bars.
    Bar(BarChart),
}

impl Chart {
    /// The anchor id.
    pub fn id(&self) -> &str {
        match self {
            Chart::Line(c) => &c.id,
            Chart::Bar(c) => &c.id,
        }
    }

    /// The heading.
    pub fn title(&self) -> &str {
        match self {
            Chart::Line(c) => &c.title,
            Chart::Bar(c) => &c.title,
        }
    }

    /// The sentence under the heading.
    pub fn note(&self) -> &str {
        match self {
            Chart::Line(c) => &c.note,
            Chart::Bar(c) => &c.note,
        }
    }

    /// Legend entries: name, colour, dashed.
    pub fn legend(&self) -> Vec<(String, String, bool)> {
        match self {
            Chart::Line(c) => {
                let mut entries: Vec<_> = c
                    .series
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (s.name.clone(), color_hex(i), s.dashed))
                    .collect();
                entries.extend(c.overlay.legend());
                entries
            }
            Chart::Bar(c) => c
                .groups
                .iter()
                .enumerate()
                .map(|(i, g)| (g.0.clone(), color_hex(i), false))
                .collect(),
        }
    }

    /// The chart as an `<svg>` element.
    pub fn to_svg(&self) -> Result<String, String> {
        let mut out = String::new();
        let mut tips = Vec::new();
        {
            let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
            root.fill(&WHITE).map_err(|e| e.to_string())?;
            match self {
                Chart::Line(c) => draw_lines(&root, c).map(|t| tips = t),
                Chart::Bar(c) => draw_bars(&root, c),
            }
            .map_err(|e| format!("chart {}: {e}", self.id()))?;
            root.present().map_err(|e| e.to_string())?;
        }
        Ok(super::overlay::with_tips(out, &tips))
    }
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// `lo..hi` widened by 5 % on each side (and to a unit span when empty).
fn padded(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite()) || hi < lo {
        return (0.0, 1.0);
    }
    if hi - lo < 1e-9 {
        return (lo - 0.5, hi + 0.5);
    }
    let pad = (hi - lo) * 0.05;
    (lo - pad, hi + pad)
}

/// Y range from 0 (or the lowest value when negative) to 10 % above the highest.
fn y_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((0f64, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let hi = if hi <= lo { lo + 1.0 } else { hi * 1.1 };
    (lo, hi)
}

/// Draws a line chart; returns the tooltips of its points at their pixel positions.
fn draw_lines(
    root: &DrawingArea<SVGBackend, Shift>,
    c: &LineChart,
) -> Result<Vec<super::overlay::Tip>, Box<dyn std::error::Error>> {
    let placed: Vec<Vec<(f64, f64)>> = c
        .series
        .iter()
        .map(|s| {
            s.points
                .iter()
                .filter_map(|&(x, y)| Some((c.x_scale.position(x)?, y)).filter(|p| p.1.is_finite()))
                .collect()
        })
        .collect();
    let tips: Vec<((f64, f64), &str)> = c
        .series
        .iter()
        .flat_map(|s| s.points.iter().zip(&s.tips))
        .filter_map(|(&(x, y), tip)| Some(((c.x_scale.position(x)?, y), tip.as_str())))
        .filter(|(p, _)| p.1.is_finite())
        .collect();
    let xs = placed.iter().flatten().map(|p| p.0).chain(c.overlay.xs());
    let (x_lo, x_hi) = xs.fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
    let (x_lo, x_hi) = padded(x_lo, x_hi);
    let ys = placed.iter().flatten().map(|p| p.1);
    let (y_lo, y_hi) = if c.overlay.zoom_y {
        c.overlay.y_range(ys)
    } else {
        y_range(ys)
    };
    let mut chart = ChartBuilder::on(root)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(x_lo..x_hi, y_lo..y_hi)?;
    let x_fmt = |p: &f64| c.x_scale.label(*p);
    let y_fmt = |v: &f64| short(*v);
    let x_ticks = match c.x_scale {
        Scale::Linear => 10,
        _ => ((x_hi - x_lo).ceil() as usize + 1).clamp(2, 24),
    };
    chart
        .configure_mesh()
        .x_desc(c.x_label.as_str())
        .y_desc(c.y_label.as_str())
        .x_labels(x_ticks)
        .y_labels(8)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .max_light_lines(1)
        .light_line_style(RGBColor(242, 242, 242))
        .label_style(("sans-serif", 16))
        .axis_desc_style(("sans-serif", 17))
        .draw()?;
    c.overlay.draw_under(&mut chart)?;
    for (i, (s, points)) in c.series.iter().zip(&placed).enumerate() {
        let style = ShapeStyle::from(color(i)).stroke_width(2);
        if !s.markers_only {
            if s.dashed {
                chart.draw_series(DashedLineSeries::new(points.clone(), 8, 5, style))?;
            } else {
                chart.draw_series(LineSeries::new(points.clone(), style))?;
            }
        }
        if s.markers || s.markers_only {
            chart.draw_series(
                points
                    .iter()
                    .map(|&p| Circle::new(p, 4, ShapeStyle::from(color(i)).filled())),
            )?;
        }
    }
    c.overlay.draw_over(&mut chart)?;
    Ok(tips
        .iter()
        .map(|(p, tip)| (chart.backend_coord(p), tip.to_string()))
        .collect())
}

fn draw_bars(root: &DrawingArea<SVGBackend, Shift>, c: &BarChart) -> DrawResult {
    let n = c.categories.len().max(1);
    let values = c.groups.iter().flat_map(|g| g.1.iter().flatten().copied());
    let (y_lo, y_hi) = y_range(values.chain(c.reference));
    let mut chart = ChartBuilder::on(root)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5..(n as f64 - 0.5), y_lo..y_hi)?;
    let x_fmt = |p: &f64| {
        let i = p.round();
        if (p - i).abs() < 1e-9 && i >= 0.0 {
            c.categories.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    let y_fmt = |v: &f64| short(*v);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n.min(24) + 1)
        .y_labels(8)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .y_desc(c.y_label.as_str())
        .max_light_lines(1)
        .light_line_style(RGBColor(242, 242, 242))
        .label_style(("sans-serif", 16))
        .axis_desc_style(("sans-serif", 17))
        .draw()?;
    let groups = c.groups.len().max(1) as f64;
    let width = 0.8 / groups;
    for (gi, (_, values)) in c.groups.iter().enumerate() {
        let bars = values.iter().enumerate().filter_map(|(ci, v)| {
            let v = (*v)?.max(0.0);
            let left = ci as f64 - 0.4 + gi as f64 * width;
            Some(Rectangle::new(
                [(left, 0.0), (left + width * 0.9, v)],
                ShapeStyle::from(color(gi)).filled(),
            ))
        });
        chart.draw_series(bars)?;
    }
    if let Some(r) = c.reference {
        chart.draw_series(DashedLineSeries::new(
            vec![(-0.5, r), (n as f64 - 0.5, r)],
            8,
            5,
            ShapeStyle::from(RGBColor(200, 0, 0)).stroke_width(2),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text of every `<text>` element.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                Some(
                    t.split_once('>')?
                        .1
                        .split_once("</text>")?
                        .0
                        .trim()
                        .to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn log_scales_place_and_label_round_values() {
        assert_eq!(Scale::Log2.position(16.0), Some(4.0));
        assert_eq!(Scale::Log2.position(0.0), None);
        assert_eq!(Scale::Log2.label(4.0), "16");
        assert_eq!(Scale::Log2.label(4.5), "");
        assert!((Scale::Percentile.position(0.99).unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(Scale::Percentile.position(1.0), None);
        assert_eq!(Scale::Percentile.label(0.0), "0%");
        assert_eq!(Scale::Percentile.label(3.0), "99.9%");
        assert_eq!(Scale::Linear.label(2.5), "2.5");
    }

    #[test]
    fn short_numbers_drop_trailing_zeros_and_abbreviate_thousands() {
        assert_eq!(short(0.0), "0");
        assert_eq!(short(12.5), "12.5");
        assert_eq!(short(0.1234), "0.123");
        assert_eq!(short(25_000.0), "25k");
        assert_eq!(short(12_500_000.0), "12.5M");
    }

    #[test]
    fn a_line_chart_renders_every_series_and_its_axis_labels() {
        let chart = Chart::Line(LineChart {
            id: "chart-t".into(),
            title: "t".into(),
            note: String::new(),
            x_label: "connections".into(),
            x_scale: Scale::Log2,
            y_label: "requests per second".into(),
            series: vec![
                Series::line("a", vec![(1.0, 100.0), (4.0, 300.0), (16.0, 350.0)]),
                Series {
                    dashed: true,
                    ..Series::line("b", vec![(1.0, 90.0), (16.0, 200.0)])
                },
            ],
            overlay: Overlay::default(),
        });
        let svg = chart.to_svg().unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("connections") && svg.contains("requests per second"));
        let texts = texts(&svg);
        assert!(
            texts.contains(&"16".to_string()),
            "a tick at 16 connections: {texts:?}"
        );
        let lower = svg.to_lowercase();
        assert!(
            lower.contains(&color_hex(0)) && lower.contains(&color_hex(1)),
            "{svg}"
        );
        assert_eq!(svg.matches("<circle").count(), 5, "one marker per point");
    }

    #[test]
    fn a_bar_chart_draws_one_bar_per_value_and_the_reference_line() {
        let chart = Chart::Bar(BarChart {
            id: "chart-b".into(),
            title: "b".into(),
            note: String::new(),
            y_label: "% of limit".into(),
            categories: vec!["#0".into(), "#1".into()],
            groups: vec![
                ("avg".into(), vec![Some(40.0), Some(80.0)]),
                ("peak".into(), vec![Some(60.0), None]),
            ],
            reference: Some(100.0),
        });
        let svg = chart.to_svg().unwrap();
        let texts = texts(&svg);
        assert!(
            texts.contains(&"#0".into()) && texts.contains(&"#1".into()),
            "{texts:?}"
        );
        // The background, three bars.
        assert_eq!(svg.matches("<rect").count(), 1 + 3, "{svg}");
    }
}
