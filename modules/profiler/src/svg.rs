//! The distributions as one SVG picture: a bar chart per distribution,
//! written by hand (a few dozen elements each; a plotting crate would add
//! more build time than it saves here).

use pnmpi_sdk::fixed::Fixed;
use std::borrow::Cow;
use std::fmt::Write;

/// One distribution to draw.
pub struct Panel<'a> {
    /// Drawn above the chart.
    pub title: String,
    /// Sparse `[bin, count]`; bin `bins` is the overflow.
    pub counts: &'a [(usize, u64)],
    /// Bins below the overflow.
    pub bins: usize,
    /// A bin's width, in `unit`s.
    pub width: f64,
    /// The unit of `width`, for the axis.
    pub unit: &'static str,
}

const W: f64 = 900.0;
const H: f64 = 250.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 44.0;

/// `text` with `&`, `<` and `>` escaped; borrowed when it has none (the
/// axis labels never do).
fn escape(text: &str) -> Cow<'_, str> {
    if !text.contains(['&', '<', '>']) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;"),
    )
}

/// The picture of all `panels`, stacked.
pub fn render(panels: &[Panel]) -> String {
    let mut svg = String::new();
    let height = H * panels.len().max(1) as f64;
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" viewBox="0 0 {W} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    for (i, panel) in panels.iter().enumerate() {
        draw(&mut svg, panel, H * i as f64);
    }
    svg.push_str("</svg>\n");
    svg
}

fn draw(svg: &mut String, panel: &Panel, y0: f64) {
    let _ = writeln!(
        svg,
        r#"<text x="{LEFT}" y="{}" font-size="14" font-weight="bold">{}</text>"#,
        y0 + 20.0,
        escape(&panel.title)
    );
    let (plot_w, plot_h) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let base = y0 + TOP + plot_h;
    let _ = writeln!(
        svg,
        r##"<path d="M{LEFT},{} V{base} H{}" stroke="#333" fill="none"/>"##,
        y0 + TOP,
        LEFT + plot_w
    );
    let Some(&(last, _)) = panel.counts.last() else {
        let _ = writeln!(
            svg,
            r##"<text x="{}" y="{}" fill="#666">no points</text>"##,
            LEFT + 10.0,
            base - 10.0
        );
        return;
    };
    let shown = last + 1;
    let max = panel.counts.iter().map(|&(_, n)| n).max().unwrap_or(1).max(1);
    let bar = plot_w / shown as f64;
    for &(bin, count) in panel.counts {
        // Log scale: the phases of interest are often a few points next
        // to thousands of short gaps.
        let h = plot_h * (count as f64).ln_1p() / (max as f64).ln_1p();
        let color = if bin == panel.bins { "#d62728" } else { "#1f77b4" };
        // `<rect x=".." y=".." width=".." height=".." fill="..">` and its
        // title, pushed piece by piece (a bar is most of the picture).
        let attributes = [
            (r#"<rect x=""#, LEFT + bar * bin as f64),
            (r#"" y=""#, base - h),
            (r#"" width=""#, (bar * 0.9).max(0.5)),
            (r#"" height=""#, h),
        ];
        for (name, value) in attributes {
            svg.push_str(name);
            Fixed(value, 2).with_text(|text| svg.push_str(text));
        }
        svg.push_str(r#"" fill=""#);
        svg.push_str(color);
        svg.push_str(r#""><title>"#);
        // Numbers and a unit: nothing to escape.
        push_label(svg, panel, bin);
        svg.push_str(": ");
        svg.push_str(itoa::Buffer::new().format(count));
        svg.push_str("</title></rect>\n");
    }
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="end">{max}</text>"#,
        LEFT - 6.0,
        y0 + TOP + 4.0
    );
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="end">0</text>"#,
        LEFT - 6.0,
        base + 4.0
    );
    for k in 0..=4 {
        let edge = shown as f64 * k as f64 / 4.0;
        let text = if edge as usize > panel.bins {
            "overflow".to_string()
        } else {
            format!(
                "{} {}",
                trim(&Fixed(edge * panel.width, 4).to_string()),
                panel.unit
            )
        };
        let anchor = ["start", "middle", "middle", "middle", "end"][k];
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="{}" text-anchor="{anchor}">{}</text>"#,
            Fixed(LEFT + bar * edge, 2),
            base + 16.0,
            escape(&text)
        );
    }
    let _ = writeln!(
        svg,
        r##"<text x="{}" y="{}" text-anchor="middle" fill="#444">count per bin of {} {} (log scale; red: at or beyond the range)</text>"##,
        LEFT + plot_w / 2.0,
        base + 34.0,
        trim(&Fixed(panel.width, 4).to_string()),
        panel.unit
    );
}

/// Pushes `[a, b) unit` of a bin, its numbers written in place.
fn push_label(svg: &mut String, panel: &Panel, bin: usize) {
    svg.push('[');
    push_trimmed(svg, Fixed(bin as f64 * panel.width, 4));
    svg.push_str(", ");
    if bin >= panel.bins {
        svg.push_str("inf");
    } else {
        push_trimmed(svg, Fixed((bin + 1) as f64 * panel.width, 4));
    }
    svg.push_str(") ");
    svg.push_str(panel.unit);
}

/// Pushes `number` as [`trim`] shortens it.
fn push_trimmed(svg: &mut String, number: Fixed) {
    number.with_text(|text| svg.push_str(trim(text)));
}

/// A fixed-point number without trailing zeros: `12.5000` as `12.5`.
pub fn trim(number: &str) -> &str {
    let bytes = number.as_bytes();
    if !bytes.contains(&b'.') {
        return number;
    }
    let mut end = bytes.len();
    while end > 0 && bytes[end - 1] == b'0' {
        end -= 1;
    }
    if end > 0 && bytes[end - 1] == b'.' {
        end -= 1;
    }
    // Only ASCII was cut: `end` is a character boundary.
    &number[..end]
}
