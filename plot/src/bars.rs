//! Grouped bar charts: one group per case (a machine), one bar per
//! variant (a model) in each, and optional reference lines (a measured
//! value), as PSINS's paper sets machines side by side.

use crate::{span, tick, PALETTE};
use anyhow::{anyhow, Result};
use plotters::prelude::*;

/// A grouped bar chart.
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    /// Caption.
    pub title: String,
    /// Y axis description.
    pub y_label: String,
    /// The groups along x.
    pub groups: Vec<String>,
    /// The bars of each group: (legend, one value per group; NaN leaves a gap).
    pub bars: Vec<(String, Vec<f64>)>,
    /// Horizontal dashed lines: (legend, value).
    pub references: Vec<(String, f64)>,
}

impl BarChart {
    /// The chart as an SVG document.
    pub fn svg(&self) -> Result<String> {
        let err = |e: &dyn std::fmt::Display| anyhow!("cannot draw {}: {e}", self.title);
        let values: Vec<f64> = self
            .bars
            .iter()
            .flat_map(|b| b.1.iter().copied())
            .chain(self.references.iter().map(|r| r.1))
            .filter(|v| v.is_finite())
            .collect();
        let (y0, y1) = span(&values, false);
        let n = self.groups.len().max(1) as f64;
        let k = self.bars.len().max(1) as f64;
        // Long group labels (a report's link names) widen the chart, so
        // that each stays inside its group's width.
        let longest = self.groups.iter().map(|g| g.chars().count()).max().unwrap_or(0);
        let width = (n * (longest as f64 * 8.0 + 20.0) + 120.0).max(900.0) as u32;
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (width, 500)).into_drawing_area();
            root.fill(&WHITE).map_err(|e| err(&e))?;
            let mut chart = ChartBuilder::on(&root)
                .caption(&self.title, ("sans-serif", 20))
                .margin(15)
                .x_label_area_size(45)
                .y_label_area_size(80)
                .build_cartesian_2d(0.0..n, y0..y1)
                .map_err(|e| err(&e))?;
            let groups = self.groups.clone();
            chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(self.groups.len() * 2 + 1)
                .x_label_formatter(&move |v| {
                    // Label each group at its middle only.
                    let i = v.floor() as usize;
                    if (v - v.floor() - 0.5).abs() < 1e-9 {
                        groups.get(i).cloned().unwrap_or_default()
                    } else {
                        String::new()
                    }
                })
                .y_desc(&self.y_label)
                .y_label_formatter(&|v| tick(*v))
                .axis_desc_style(("sans-serif", 16))
                .label_style(("sans-serif", 13))
                .light_line_style(WHITE.mix(0.0))
                .draw()
                .map_err(|e| err(&e))?;
            let width = 0.8 / k;
            for (b, (name, vals)) in self.bars.iter().enumerate() {
                let colour = PALETTE[b % PALETTE.len()];
                let rects = vals
                    .iter()
                    .enumerate()
                    .filter(|(_, v)| v.is_finite())
                    .map(|(g, &v)| {
                        let x0 = g as f64 + 0.1 + b as f64 * width;
                        Rectangle::new([(x0, 0.0), (x0 + width * 0.9, v)], colour.filled())
                    });
                chart
                    .draw_series(rects)
                    .map_err(|e| err(&e))?
                    .label(name)
                    .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 15, y + 5)], colour.filled()));
            }
            for (i, (name, v)) in self.references.iter().enumerate() {
                let colour = PALETTE[(self.bars.len() + i) % PALETTE.len()];
                let line = colour.stroke_width(2);
                chart
                    .draw_series(DashedLineSeries::new([(0.0, *v), (n, *v)], 6, 4, line))
                    .map_err(|e| err(&e))?
                    .label(name)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], line));
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .label_font(("sans-serif", 13))
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(|e| err(&e))?;
            root.present().map_err(|e| err(&e))?;
        }
        Ok(svg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_groups_bars_and_references() {
        let c = BarChart {
            title: "predicted runtime".into(),
            y_label: "s".into(),
            groups: vec!["jaws".into(), "sapphire".into()],
            bars: vec![
                ("simple".into(), vec![1.0, 2.0]),
                ("pmac".into(), vec![1.5, f64::NAN]),
            ],
            references: vec![("traced".into(), 1.2)],
        };
        let svg = c.svg().unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        for word in [
            "jaws",
            "sapphire",
            "simple",
            "pmac",
            "traced",
            "predicted runtime",
        ] {
            assert!(svg.contains(word), "{word}");
        }
        // The background, three bars (one value is missing), the legend's
        // background and frame, and its two boxes.
        assert_eq!(svg.matches("<rect").count(), 1 + 3 + 2 + 2, "{svg}");
    }
}
