//! What-if specifications: `compute rank R xF`, `compute xF`,
//! `compute site FILE:LINE xF`, `latency xF`, `bandwidth xF`.

use crate::AnalyzeError;
use serde::Serialize;
use std::fmt;

/// One change to the traced run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Change {
    /// Every CPU burst of one rank (or of all) takes `factor` times as long.
    Compute {
        /// The rank, or every rank.
        rank: Option<u32>,
        /// The factor.
        factor: f64,
    },
    /// The bursts before the calls at one call site.
    ComputeSite {
        /// `file:line`.
        site: String,
        /// The factor.
        factor: f64,
    },
    /// Every message latency times `factor`.
    Latency(f64),
    /// Every bandwidth times `factor`.
    Bandwidth(f64),
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::Compute {
                rank: Some(r),
                factor,
            } => write!(f, "compute rank {r} x{factor}"),
            Change::Compute { rank: None, factor } => write!(f, "compute x{factor}"),
            Change::ComputeSite { site, factor } => write!(f, "compute site {site} x{factor}"),
            Change::Latency(x) => write!(f, "latency x{x}"),
            Change::Bandwidth(x) => write!(f, "bandwidth x{x}"),
        }
    }
}

const GRAMMAR: &str = "`compute rank R xF`, `compute xF`, `compute site FILE:LINE xF`, `latency xF` or `bandwidth xF` (F a positive factor, e.g. x0.8)";

fn bad(spec: &str, what: &str) -> AnalyzeError {
    AnalyzeError::Spec(format!("--what-if \"{spec}\": {what}; write {GRAMMAR}"))
}

/// `xF` (or `x F`, `*F`) as a positive, finite factor.
fn factor(spec: &str, words: &[&str]) -> Result<f64, AnalyzeError> {
    let joined = words.concat();
    let digits = joined
        .strip_prefix('x')
        .or_else(|| joined.strip_prefix('*'))
        .ok_or_else(|| bad(spec, "the factor must start with `x`"))?;
    let f: f64 = digits
        .parse()
        .map_err(|_| bad(spec, &format!("`{digits}` is not a number")))?;
    if !(f.is_finite() && f > 0.0) {
        return Err(bad(spec, "the factor must be positive"));
    }
    Ok(f)
}

/// Parses one specification; `world_size` bounds its rank.
pub fn parse(spec: &str, world_size: u32) -> Result<Change, AnalyzeError> {
    let words: Vec<&str> = spec.split_whitespace().collect();
    match words.as_slice() {
        ["compute", "rank", r, rest @ ..] => {
            let rank: u32 = r
                .parse()
                .map_err(|_| bad(spec, &format!("`{r}` is not a rank")))?;
            if rank >= world_size {
                return Err(bad(
                    spec,
                    &format!("the trace has ranks 0 to {}", world_size.saturating_sub(1)),
                ));
            }
            Ok(Change::Compute {
                rank: Some(rank),
                factor: factor(spec, rest)?,
            })
        }
        ["compute", "site", site, rest @ ..] => {
            if !site.contains(':') {
                return Err(bad(spec, "a site is FILE:LINE"));
            }
            Ok(Change::ComputeSite {
                site: (*site).to_owned(),
                factor: factor(spec, rest)?,
            })
        }
        ["compute", rest @ ..] if !rest.is_empty() => Ok(Change::Compute {
            rank: None,
            factor: factor(spec, rest)?,
        }),
        ["latency", rest @ ..] if !rest.is_empty() => Ok(Change::Latency(factor(spec, rest)?)),
        ["bandwidth", rest @ ..] if !rest.is_empty() => Ok(Change::Bandwidth(factor(spec, rest)?)),
        _ => Err(bad(spec, "not a change this command knows")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specifications() {
        assert_eq!(
            parse("compute rank 3 x0.8", 4).unwrap(),
            Change::Compute {
                rank: Some(3),
                factor: 0.8
            }
        );
        assert_eq!(
            parse("compute x 0.5", 4).unwrap(),
            Change::Compute {
                rank: None,
                factor: 0.5
            }
        );
        assert_eq!(parse("latency x2", 4).unwrap(), Change::Latency(2.0));
        assert_eq!(parse("bandwidth *4", 4).unwrap(), Change::Bandwidth(4.0));
        assert_eq!(
            parse("compute site cg.f:512 x0.5", 4).unwrap(),
            Change::ComputeSite {
                site: "cg.f:512".into(),
                factor: 0.5
            }
        );
        assert_eq!(
            parse("compute rank 3 x0.8", 4).unwrap().to_string(),
            "compute rank 3 x0.8"
        );
    }

    #[test]
    fn errors_say_what_to_write() {
        for (spec, what) in [
            ("compute rank 9 x0.8", "ranks 0 to 3"),
            ("compute rank 1 0.8", "must start with `x`"),
            ("latency x-1", "positive"),
            ("latency xfast", "`fast` is not a number"),
            ("network x2", "not a change"),
            ("compute site cg.f x2", "FILE:LINE"),
        ] {
            let e = parse(spec, 4).unwrap_err().to_string();
            assert!(
                e.contains(what) && e.contains(spec) && e.contains("compute rank R xF"),
                "{e}"
            );
        }
    }
}
