//! What a line chart may draw besides its lines: an interval per point as a shaded band, the
//! mean level of each segment between changes, each change as a vertical marker with its step
//! in text, and a tooltip per point. The trend page's charts use them; a run's report does not.
//!
//! Pure: plain data, drawn by [`super::svg`] with `plotters`.

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::svg::{color_hex, PALETTE};
use crate::table::html_escape;

/// Colour of a change for the worse (the palette's red).
const WORSE: (u8, u8, u8) = PALETTE[3];
/// Colour of a change for the better (the palette's green).
const BETTER: (u8, u8, u8) = PALETTE[2];
/// Colour of the segment means (the palette's grey).
const LEVEL: (u8, u8, u8) = PALETTE[7];
/// Opacity of a band over the white background.
const BAND_OPACITY: f64 = 0.2;

/// A shaded band: the interval `(x, low, high)` of each point of a series, in pieces (a point
/// without an interval ends a piece).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Band {
    /// Legend text.
    pub name: String,
    /// The series whose colour the band takes (index into the chart's series).
    pub series: usize,
    /// Runs of consecutive points with an interval; a piece of one point is a short bar.
    pub pieces: Vec<Vec<(f64, f64, f64)>>,
}

/// A horizontal dashed line at `y` from `from` to `to`: the mean of a segment.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Level {
    /// Where it starts on the x axis.
    pub from: f64,
    /// Where it ends.
    pub to: f64,
    /// Its value.
    pub y: f64,
}

/// A vertical line across the plot at `x` with a label at its top: a change.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Marker {
    /// Where on the x axis.
    pub x: f64,
    /// The text beside its top, e.g. `▼ −23 %`.
    pub label: String,
    /// Red when for the worse, green when for the better.
    pub worse: bool,
    /// Dashed: the change may still move.
    pub provisional: bool,
}

/// Everything a chart draws over (or under) its lines.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overlay {
    /// Shaded intervals, drawn under the lines.
    pub bands: Vec<Band>,
    /// Segment means, drawn under the lines.
    pub levels: Vec<Level>,
    /// Changes, drawn over the lines.
    pub markers: Vec<Marker>,
    /// The y axis spans the values (with a margin) instead of starting at 0, so that steps of
    /// a few percent show.
    pub zoom_y: bool,
}

/// A tooltip at a pixel position of the chart.
pub type Tip = ((i32, i32), String);

type Chart2d<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;
type DrawResult = Result<(), Box<dyn std::error::Error>>;

fn rgb(c: (u8, u8, u8)) -> RGBColor {
    RGBColor(c.0, c.1, c.2)
}

impl Overlay {
    /// Every x position the overlay draws at (the x axis must hold them).
    pub fn xs(&self) -> impl Iterator<Item = f64> + '_ {
        let bands = self
            .bands
            .iter()
            .flat_map(|b| b.pieces.iter().flatten().map(|p| p.0));
        let levels = self.levels.iter().flat_map(|l| [l.from, l.to]);
        bands.chain(levels).chain(self.markers.iter().map(|m| m.x))
    }

    /// The zoomed y range over `ys` and the overlay's own values: 10 % of the span below
    /// (never below 0 when nothing is negative) and above, more above for the markers' labels.
    pub fn y_range(&self, ys: impl Iterator<Item = f64>) -> (f64, f64) {
        let bands = self
            .bands
            .iter()
            .flat_map(|b| b.pieces.iter().flatten().flat_map(|p| [p.1, p.2]));
        let levels = self.levels.iter().map(|l| l.y);
        let (lo, hi) = ys
            .chain(bands)
            .chain(levels)
            .filter(|v| v.is_finite())
            .fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
        if lo > hi {
            return (0.0, 1.0);
        }
        let span = if hi - lo > 1e-9 * hi.abs().max(1.0) {
            hi - lo
        } else {
            (hi.abs() * 0.1).max(1.0)
        };
        let below = lo - 0.1 * span;
        let below = if lo >= 0.0 { below.max(0.0) } else { below };
        let headroom = if self.markers.is_empty() { 0.1 } else { 0.25 };
        (below, hi + headroom * span)
    }

    /// Legend entries (name, CSS colour, dashed) after the series' own.
    pub fn legend(&self) -> Vec<(String, String, bool)> {
        let mut out: Vec<(String, String, bool)> = self
            .bands
            .iter()
            .map(|b| {
                let (r, g, bl) = PALETTE[b.series % PALETTE.len()];
                (
                    b.name.clone(),
                    format!("rgba({r},{g},{bl},{})", BAND_OPACITY * 2.0),
                    false,
                )
            })
            .collect();
        let hex = |c: (u8, u8, u8)| format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2);
        if !self.levels.is_empty() {
            out.push(("mean between changes".into(), hex(LEVEL), true));
        }
        if self.markers.iter().any(|m| m.worse) {
            out.push(("change for the worse".into(), hex(WORSE), false));
        }
        if self.markers.iter().any(|m| !m.worse) {
            out.push(("change for the better".into(), hex(BETTER), false));
        }
        if self.markers.iter().any(|m| m.provisional) {
            out.push((
                "provisional change (may still move)".into(),
                color_hex(7),
                true,
            ));
        }
        out
    }

    /// Bands and segment means: under the lines.
    pub(super) fn draw_under(&self, chart: &mut Chart2d) -> DrawResult {
        for b in &self.bands {
            let style = rgb(PALETTE[b.series % PALETTE.len()])
                .mix(BAND_OPACITY)
                .filled();
            for piece in &b.pieces {
                if let [(x, lo, hi)] = piece.as_slice() {
                    let bar = Rectangle::new([(x - 0.12, *lo), (x + 0.12, *hi)], style);
                    chart.draw_series(std::iter::once(bar))?;
                    continue;
                }
                let outline: Vec<(f64, f64)> = piece
                    .iter()
                    .map(|p| (p.0, p.2))
                    .chain(piece.iter().rev().map(|p| (p.0, p.1)))
                    .collect();
                chart.draw_series(std::iter::once(Polygon::new(outline, style)))?;
            }
        }
        let style = ShapeStyle::from(rgb(LEVEL)).stroke_width(2);
        for l in &self.levels {
            let line = vec![(l.from, l.y), (l.to, l.y)];
            chart.draw_series(DashedLineSeries::new(line, 7, 5, style))?;
        }
        Ok(())
    }

    /// Change markers with their labels: over the lines. A label sits right of its line, or
    /// left of it in the right third of the plot; neighbours alternate between two heights.
    pub(super) fn draw_over(&self, chart: &mut Chart2d) -> DrawResult {
        let (x_range, y_range) = (chart.x_range(), chart.y_range());
        for (k, m) in self.markers.iter().enumerate() {
            let colour = rgb(if m.worse { WORSE } else { BETTER });
            let style = ShapeStyle::from(colour).stroke_width(2);
            let line = vec![(m.x, y_range.start), (m.x, y_range.end)];
            if m.provisional {
                chart.draw_series(DashedLineSeries::new(line, 6, 4, style))?;
            } else {
                chart.draw_series(LineSeries::new(line, style))?;
            }
            let right_third = m.x > x_range.start + (x_range.end - x_range.start) * 2.0 / 3.0;
            let (h, dx) = if right_third {
                (HPos::Right, -6)
            } else {
                (HPos::Left, 6)
            };
            let font = ("sans-serif", 16)
                .into_font()
                .color(&colour)
                .pos(Pos::new(h, VPos::Top));
            let dy = 4 + 20 * (k as i32 % 2);
            let label =
                EmptyElement::at((m.x, y_range.end)) + Text::new(m.label.clone(), (dx, dy), font);
            chart.draw_series(std::iter::once(label))?;
        }
        Ok(())
    }
}

/// The SVG with a transparent circle per tooltip over the drawing, each holding a `<title>`,
/// which browsers show when the pointer rests on it (no script).
pub fn with_tips(svg: String, tips: &[Tip]) -> String {
    let Some(end) = svg.rfind("</svg>").filter(|_| !tips.is_empty()) else {
        return svg;
    };
    let mut out = String::with_capacity(svg.len() + tips.len() * 120);
    out.push_str(&svg[..end]);
    out.push_str("<g class=\"tips\">\n");
    for ((x, y), tip) in tips {
        out.push_str(&format!(
            "<circle cx=\"{x}\" cy=\"{y}\" r=\"9\" fill=\"#000\" fill-opacity=\"0\"><title>{}</title></circle>\n",
            html_escape(tip)
        ));
    }
    out.push_str("</g>\n");
    out.push_str(&svg[end..]);
    out
}

#[cfg(test)]
mod tests {
    use super::super::svg::{Chart, LineChart, Scale, Series};
    use super::*;

    fn chart() -> Chart {
        Chart::Line(LineChart {
            id: "chart-t".into(),
            title: "t".into(),
            note: String::new(),
            x_label: "run".into(),
            x_scale: Scale::Ordinal,
            y_label: "requests per second".into(),
            series: vec![Series {
                tips: (1..=5).map(|i| format!("#{i} <run>")).collect(),
                ..Series::line(
                    "median",
                    vec![
                        (1.0, 100.0),
                        (2.0, 102.0),
                        (3.0, 101.0),
                        (4.0, 80.0),
                        (5.0, 81.0),
                    ],
                )
            }],
            overlay: Overlay {
                bands: vec![Band {
                    name: "interval".into(),
                    series: 0,
                    pieces: vec![
                        vec![(1.0, 98.0, 103.0), (2.0, 99.0, 104.0), (3.0, 99.0, 103.0)],
                        vec![(5.0, 79.0, 83.0)],
                    ],
                }],
                levels: vec![
                    Level {
                        from: 0.7,
                        to: 3.3,
                        y: 101.0,
                    },
                    Level {
                        from: 3.7,
                        to: 5.3,
                        y: 80.5,
                    },
                ],
                markers: vec![Marker {
                    x: 3.5,
                    label: "▼ −20 %".into(),
                    worse: true,
                    provisional: true,
                }],
                zoom_y: true,
            },
        })
    }

    #[test]
    fn bands_markers_and_tooltips_are_drawn_into_the_svg() {
        let svg = chart().to_svg().unwrap();
        assert_eq!(
            svg.matches("<polygon").count(),
            1,
            "the piece of three points"
        );
        // The background and the bar of the one-point piece.
        assert_eq!(svg.matches("<rect").count(), 2, "{svg}");
        assert!(svg.contains("▼ −20 %\n</text>"), "the marker's label");
        assert_eq!(svg.matches("<title>").count(), 5);
        assert!(
            svg.contains("<title>#4 &lt;run&gt;</title>"),
            "tooltips are escaped"
        );
        assert!(
            svg.trim_end().ends_with("</g>\n</svg>"),
            "the tooltips over the drawing"
        );
        // Ticks on whole runs only.
        assert!(svg.contains(">\n3\n</text>") && !svg.contains(">\n3.5\n</text>"));
    }

    #[test]
    fn the_zoomed_axis_spans_the_values_with_room_for_the_labels() {
        let Chart::Line(c) = chart() else {
            unreachable!()
        };
        let (lo, hi) = c.overlay.y_range([80.0, 102.0].into_iter());
        // Values 79–104 (the bands): 2.5 below, 6.25 above for the labels.
        assert!(
            (lo - 76.5).abs() < 1e-9 && (hi - 110.25).abs() < 1e-9,
            "{lo} {hi}"
        );
        let flat = Overlay::default().y_range([5.0, 5.0].into_iter());
        assert!(flat.0 < 5.0 && flat.1 > 5.0, "{flat:?}");
        let names: Vec<String> = c.overlay.legend().into_iter().map(|l| l.0).collect();
        assert_eq!(
            names,
            [
                "interval",
                "mean between changes",
                "change for the worse",
                "provisional change (may still move)"
            ]
        );
    }
}
