//! The report as an SVG: the critical path on a timeline (a row per
//! rank, compute and MPI stretches in two colours, a line at each change
//! of rank), above the rank-by-pattern matrix of wait states.

use super::Report;
use crate::AnalyzeError;
use plotters::prelude::*;

/// Rows of the matrix at most: the ranks that waited most.
const MATRIX_ROWS: usize = 48;

const COMPUTE: RGBColor = RGBColor(44, 160, 44);
const MPI: RGBColor = RGBColor(255, 127, 14);
const HOP: RGBColor = RGBColor(127, 127, 127);

fn err(e: &dyn std::fmt::Display) -> AnalyzeError {
    AnalyzeError::Draw(e.to_string())
}

impl Report {
    /// The SVG's text.
    pub fn svg(&self) -> Result<String, AnalyzeError> {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (1000, 900)).into_drawing_area();
            root.fill(&WHITE).map_err(|e| err(&e))?;
            let (top, bottom) = root.split_vertically(450);
            self.timeline(&top)?;
            self.matrix(&bottom)?;
            root.present().map_err(|e| err(&e))?;
        }
        Ok(svg)
    }

    fn timeline(&self, area: &DrawingArea<SVGBackend, plotters::coord::Shift>) -> Result<(), AnalyzeError> {
        let ranks = f64::from(self.ranks.max(1));
        let end = self
            .runtime_s
            .max(self.stretches.last().map_or(0.0, |s| s.end_s))
            .max(1e-9);
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!(
                    "critical path: {:.6} s (compute green, MPI orange)",
                    self.path.length_s
                ),
                ("sans-serif", 18),
            )
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..end, -0.5..ranks - 0.5)
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("time from the end of MPI_Init, s")
            .y_desc("rank")
            .y_labels(self.ranks.clamp(1, 24) as usize)
            .y_label_formatter(&|v| {
                // Ranks sit at whole numbers; other ticks stay unlabelled.
                if (v - v.round()).abs() < 1e-6 && *v >= 0.0 {
                    format!("{v:.0}")
                } else {
                    String::new()
                }
            })
            .label_style(("sans-serif", 12))
            .draw()
            .map_err(|e| err(&e))?;
        let bars = self.stretches.iter().map(|s| {
            let y = f64::from(s.rank);
            let colour = if s.compute { COMPUTE } else { MPI };
            Rectangle::new([(s.start_s, y - 0.35), (s.end_s, y + 0.35)], colour.filled())
        });
        chart.draw_series(bars).map_err(|e| err(&e))?;
        let hops = self
            .stretches
            .windows(2)
            .filter(|w| w[0].rank != w[1].rank)
            .map(|w| {
                PathElement::new(
                    vec![
                        (w[0].end_s, f64::from(w[0].rank)),
                        (w[1].start_s, f64::from(w[1].rank)),
                    ],
                    HOP.stroke_width(1),
                )
            });
        chart.draw_series(hops).map_err(|e| err(&e))?;
        Ok(())
    }

    fn matrix(&self, area: &DrawingArea<SVGBackend, plotters::coord::Shift>) -> Result<(), AnalyzeError> {
        let w = &self.waits;
        let mut rows: Vec<_> = w.by_rank.iter().collect();
        if rows.len() > MATRIX_ROWS {
            rows.sort_by(|a, b| b.total_s.total_cmp(&a.total_s));
            rows.truncate(MATRIX_ROWS);
        }
        rows.sort_by_key(|r| r.rank);
        let max = rows
            .iter()
            .flat_map(|r| r.time_s.iter().copied())
            .fold(0.0, f64::max)
            .max(1e-12);
        let cols = w.patterns.len();
        let labels: Vec<String> = rows.iter().map(|r| r.rank.to_string()).collect();
        let names = w.patterns.clone();
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!("wait states by rank and pattern (darkest: {:.3} ms)", max * 1e3),
                ("sans-serif", 18),
            )
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..cols as f64, 0.0..rows.len().max(1) as f64)
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(2 * cols + 1)
            .x_label_formatter(&|v| {
                let i = v.floor() as usize;
                if (v - v.floor() - 0.5).abs() < 1e-9 {
                    names.get(i).map_or(String::new(), |s| s.to_string())
                } else {
                    String::new()
                }
            })
            .y_labels(2 * labels.len().min(24) + 1)
            .y_label_formatter(&|v| {
                let i = v.floor() as usize;
                if (v - v.floor() - 0.5).abs() < 0.3 {
                    labels.get(i).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .y_desc("rank")
            .label_style(("sans-serif", 12))
            .draw()
            .map_err(|e| err(&e))?;
        let cells = rows.iter().enumerate().flat_map(|(y, r)| {
            r.time_s.iter().enumerate().map(move |(x, &t)| {
                let shade = 1.0 - t / max;
                let c = RGBColor((255.0 * shade) as u8, (255.0 * shade) as u8, 255);
                Rectangle::new(
                    [
                        (x as f64 + 0.02, y as f64 + 0.05),
                        (x as f64 + 0.98, y as f64 + 0.95),
                    ],
                    c.filled(),
                )
            })
        });
        chart.draw_series(cells).map_err(|e| err(&e))?;
        Ok(())
    }
}
