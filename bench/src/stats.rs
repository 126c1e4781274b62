//! The statistics the report needs, kept free of I/O so that they can be
//! tested on their own.

/// The median of `samples` (the mean of the two middle values for an even
/// count), or `None` when there are none. The median rather than the mean
/// or the minimum: one round disturbed by another process moves neither
/// it nor the comparison between configurations.
pub fn median(samples: &[f64]) -> Option<f64> {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// The least-squares slope of `y` over `x` for `(x, y)` points, or `None`
/// when fewer than two distinct `x` values leave it undefined. It is the
/// paper's per-layer cost β when `x` is a layer count.
pub fn slope(points: &[(f64, f64)]) -> Option<f64> {
    let n = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty_sets() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0]), Some(3.0));
        assert_eq!(median(&[9.0, 1.0, 5.0]), Some(5.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        // An outlier round does not move it.
        assert_eq!(median(&[7.0, 7.1, 500.0, 6.9, 7.0]), Some(7.0));
    }

    #[test]
    fn slope_is_exact_on_a_line_and_undefined_on_one_x() {
        let line: Vec<(f64, f64)> = [1.0, 10.0, 100.0].iter().map(|&x| (x, 3.0 + 2.5 * x)).collect();
        assert!((slope(&line).unwrap() - 2.5).abs() < 1e-12);
        assert_eq!(slope(&[(1.0, 5.0), (1.0, 7.0)]), None);
        assert_eq!(slope(&[]), None);
    }

    #[test]
    fn slope_fits_noisy_points_by_least_squares() {
        // Residuals +1, -2, +1 around y = 2x cancel in the fit.
        let points = [(1.0, 3.0), (2.0, 2.0), (3.0, 7.0)];
        assert!((slope(&points).unwrap() - 2.0).abs() < 1e-12);
    }
}
