//! SVG line charts (the benchmark suite's figures, the simulators' sweeps
//! and comparisons), drawn with plotters' SVG backend. Without its `ttf` feature plotters estimates text extents and
//! writes `<text>` elements that the browser renders with its own fonts, so
//! no font library or font file is needed here.

mod bars;

pub use bars::BarChart;

use anyhow::{anyhow, Result};
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::prelude::*;

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Measured points, joined by a line.
    Measured,
    /// A reference (native MPI, a bar, a model): a dashed line.
    Reference,
}

/// One line of a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Its legend.
    pub name: String,
    /// (x, y) points, in drawing order.
    pub points: Vec<(f64, f64)>,
    /// Measured or reference.
    pub kind: Kind,
}

/// A chart: axes, their scales and the series on them.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Caption.
    pub title: String,
    /// X axis description.
    pub x_label: String,
    /// Y axis description.
    pub y_label: String,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// Put the legend at the lower right, for charts whose data fill the
    /// upper left.
    pub legend_lower_right: bool,
    pub series: Vec<Series>,
}

/// The colours series take in turn (the first is for measurements).
const PALETTE: [RGBColor; 5] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(127, 127, 127),
    RGBColor(148, 103, 189),
];

impl Chart {
    /// The chart as an SVG document. Points a log axis cannot show (≤ 0)
    /// are left out.
    pub fn svg(&self) -> Result<String> {
        let mut chart = self.clone();
        for s in &mut chart.series {
            s.points.retain(|&(x, y)| {
                x.is_finite() && y.is_finite() && (!self.log_x || x > 0.0) && (!self.log_y || y > 0.0)
            });
        }
        chart.series.retain(|s| !s.points.is_empty());
        let xs: Vec<f64> = chart
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .collect();
        let ys: Vec<f64> = chart
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .collect();
        let (x0, x1) = span(&xs, self.log_x);
        let (y0, y1) = span(&ys, self.log_y);
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (800, 500)).into_drawing_area();
            match (self.log_x, self.log_y) {
                (false, false) => chart.draw(&root, x0..x1, y0..y1),
                (true, false) => chart.draw(&root, (x0..x1).log_scale(), y0..y1),
                (false, true) => chart.draw(&root, x0..x1, (y0..y1).log_scale()),
                (true, true) => chart.draw(&root, (x0..x1).log_scale(), (y0..y1).log_scale()),
            }?;
            root.present()
                .map_err(|e| anyhow!("cannot draw {}: {e}", self.title))?;
        }
        Ok(svg)
    }

    fn draw<X, Y>(&self, root: &DrawingArea<SVGBackend, plotters::coord::Shift>, x: X, y: Y) -> Result<()>
    where
        X: AsRangedCoord<Value = f64>,
        Y: AsRangedCoord<Value = f64>,
        X::CoordDescType: Ranged + ValueFormatter<f64>,
        Y::CoordDescType: Ranged + ValueFormatter<f64>,
    {
        let err = |e: &dyn std::fmt::Display| anyhow!("cannot draw {}: {e}", self.title);
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(x, y)
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .axis_desc_style(("sans-serif", 16))
            .label_style(("sans-serif", 13))
            .x_label_formatter(&|v| tick(*v))
            .y_label_formatter(&|v| tick(*v))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(|e| err(&e))?;
        for (i, s) in self.series.iter().enumerate() {
            let colour = PALETTE[i % PALETTE.len()];
            let line = colour.stroke_width(2);
            match s.kind {
                Kind::Measured => {
                    chart
                        .draw_series(LineSeries::new(s.points.iter().copied(), line))
                        .map_err(|e| err(&e))?
                        .label(&s.name)
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], line));
                    chart
                        .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                        .map_err(|e| err(&e))?;
                }
                Kind::Reference => {
                    chart
                        .draw_series(DashedLineSeries::new(s.points.iter().copied(), 6, 4, line))
                        .map_err(|e| err(&e))?
                        .label(&s.name)
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], line));
                }
            }
        }
        chart
            .configure_series_labels()
            .position(if self.legend_lower_right {
                SeriesLabelPosition::LowerRight
            } else {
                SeriesLabelPosition::UpperLeft
            })
            .label_font(("sans-serif", 13))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| err(&e))?;
        Ok(())
    }
}

/// A tick label: whole numbers without decimals, others with up to 3
/// significant digits.
fn tick(v: f64) -> String {
    if v == v.round() && v.abs() < 1e9 {
        format!("{v:.0}")
    } else {
        let digits = (2 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
        format!("{v:.digits$}")
    }
}

/// The axis range for `values`: from 0 (linear) or a bit below the
/// smallest (log) to a bit above the largest.
fn span(values: &[f64], log: bool) -> (f64, f64) {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() || !hi.is_finite() {
        return if log { (1.0, 10.0) } else { (0.0, 1.0) };
    }
    if log {
        (lo / 1.5, hi * 1.5)
    } else {
        let lo = lo.min(0.0);
        let hi = if hi > lo { hi } else { lo + 1.0 };
        (lo, hi + (hi - lo) * 0.08)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(log: bool) -> Chart {
        Chart {
            title: "latency vs layers".into(),
            x_label: "layers".into(),
            y_label: "ns".into(),
            log_x: log,
            log_y: log,
            legend_lower_right: log,
            series: vec![
                Series {
                    name: "pnmpi".into(),
                    points: vec![(0.0, 4.0), (1.0, 7.0), (10.0, 45.0)],
                    kind: Kind::Measured,
                },
                Series {
                    name: "native".into(),
                    points: vec![(0.0, 3.7), (10.0, 3.7)],
                    kind: Kind::Reference,
                },
            ],
        }
    }

    #[test]
    fn draws_a_complete_svg_document_on_linear_and_log_axes() {
        for log in [false, true] {
            let svg = chart(log).svg().unwrap();
            assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
            assert!(svg.trim_end().ends_with("</svg>"));
            assert!(svg.contains("latency vs layers"));
            assert!(svg.contains("native"));
        }
    }

    #[test]
    fn ticks_are_short() {
        assert_eq!(tick(100.0), "100");
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(2.5), "2.50");
        assert_eq!(tick(0.0316), "0.0316");
        assert_eq!(tick(316.2), "316");
    }

    #[test]
    fn ranges_start_at_zero_on_linear_axes_and_pad_log_ones() {
        assert_eq!(span(&[2.0, 10.0], false), (0.0, 10.8));
        assert_eq!(span(&[2.0, 10.0], true), (2.0 / 1.5, 15.0));
        assert_eq!(span(&[], true), (1.0, 10.0));
        assert_eq!(span(&[0.0], false), (0.0, 1.08));
    }
}
