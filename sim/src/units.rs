//! Quantities with units, as a machine file writes them: `"1.5us"`,
//! `"64KiB"`, `"10GB/s"`. Numbers without a unit are SI base units
//! (seconds, bytes, bytes per second), so that a fitted value can be
//! written back exactly.
//!
//! Every quantity deserializes from either form, and a bad one is a serde
//! error, which the TOML reader turns into the file, line and key.

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// Simulated time, in nanoseconds. A float, as in SimGrid and LogGOPSim:
/// transfer times are fractions of a ns, and 2^53 ns is 104 days.
pub type Ns = f64;

/// A duration.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct Time(pub Ns);

/// A message size or a size threshold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

/// A bandwidth, in bytes per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct Bandwidth(pub f64);

impl Bandwidth {
    /// Nanoseconds to move `bytes` at this bandwidth.
    pub fn ns_for(self, bytes: u64) -> Ns {
        bytes as f64 * 1e9 / self.0
    }
}

/// Splits `"1.5us"` into (1.5, "us").
fn split(s: &str) -> Result<(f64, &str), String> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-')))
        .unwrap_or(s.len());
    // An exponent needs a digit after it: "5e" is 5 with unit "e"... which is wrong anyway.
    let (num, unit) = s.split_at(end);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` does not start with a number"))?;
    if !value.is_finite() || value < 0.0 {
        return Err(format!("`{s}` must be a finite, non-negative number"));
    }
    Ok((value, unit.trim()))
}

/// Parses a duration: `ps`, `ns`, `us` (or `µs`), `ms`, `s`.
pub fn parse_time(s: &str) -> Result<Time, String> {
    let (v, unit) = split(s)?;
    let scale = match unit {
        "ps" => 1e-3,
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" | "" => 1e9,
        _ => {
            return Err(format!(
                "unknown time unit `{unit}` in `{s}` (use ps, ns, us, ms or s)"
            ))
        }
    };
    Ok(Time(v * scale))
}

fn byte_scale(unit: &str) -> Option<f64> {
    Some(match unit {
        "" | "B" => 1.0,
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024f64.powi(4),
        _ => return None,
    })
}

/// Parses a size: `B`, `kB`, `MB`, `GB` (powers of 1000) or `KiB`, `MiB`, `GiB`.
pub fn parse_bytes(s: &str) -> Result<Bytes, String> {
    let (v, unit) = split(s)?;
    let scale = byte_scale(unit)
        .ok_or_else(|| format!("unknown size unit `{unit}` in `{s}` (use B, kB, MB, GB, KiB, MiB or GiB)"))?;
    let b = v * scale;
    if b.fract() != 0.0 || b > u64::MAX as f64 {
        return Err(format!("`{s}` is not a whole number of bytes"));
    }
    Ok(Bytes(b as u64))
}

/// Parses a bandwidth: a size unit per second (`10GB/s`, `1.2GiB/s`) or
/// bits per second (`100Gbit/s`, `100Gbps`).
pub fn parse_bandwidth(s: &str) -> Result<Bandwidth, String> {
    let (v, unit) = split(s)?;
    let bits = |prefix: &str| -> Option<f64> {
        Some(
            match prefix {
                "" => 1.0,
                "k" | "K" => 1e3,
                "M" => 1e6,
                "G" => 1e9,
                "T" => 1e12,
                _ => return None,
            } / 8.0,
        )
    };
    let scale = if let Some(u) = unit.strip_suffix("/s") {
        match u.strip_suffix("bit") {
            Some(p) => bits(p),
            None => byte_scale(u),
        }
    } else if let Some(p) = unit.strip_suffix("bps") {
        bits(p)
    } else if unit.is_empty() {
        Some(1.0)
    } else {
        None
    };
    let scale = scale.ok_or_else(|| {
        format!("unknown bandwidth unit `{unit}` in `{s}` (use B/s, MB/s, GB/s, GiB/s, Gbit/s or Gbps)")
    })?;
    if v == 0.0 {
        return Err(format!("bandwidth `{s}` must be above zero"));
    }
    Ok(Bandwidth(v * scale))
}

/// A serde visitor for a quantity given as a string with a unit or a bare number.
struct QuantityVisitor<T> {
    what: &'static str,
    parse: fn(&str) -> Result<T, String>,
}

impl<T> Visitor<'_> for QuantityVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a {} such as a number or a string with a unit", self.what)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.parse)(v).map_err(E::custom)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        self.visit_str(&format!("{v:e}"))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        self.visit_str(&v.to_string())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        self.visit_str(&v.to_string())
    }
}

macro_rules! quantity_serde {
    ($t:ty, $what:literal, $parse:expr, $show:expr) => {
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any(QuantityVisitor {
                    what: $what,
                    parse: $parse,
                })
            }
        }

        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&$show(self))
            }
        }

        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(&$show(self))
            }
        }
    };
}

quantity_serde!(Time, "duration", parse_time, |t: &Time| format!("{}ns", t.0));
quantity_serde!(Bytes, "size", parse_bytes, |b: &Bytes| format!("{}B", b.0));
quantity_serde!(Bandwidth, "bandwidth", parse_bandwidth, |b: &Bandwidth| format!(
    "{}B/s",
    b.0
));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(parse_time("1.5us").unwrap(), Time(1500.0));
        assert_eq!(parse_time("800ns").unwrap(), Time(800.0));
        assert_eq!(parse_time("2").unwrap(), Time(2e9));
        assert_eq!(parse_time("5ps").unwrap(), Time(0.005));
        assert!(parse_time("5 parsecs").unwrap_err().contains("unknown time unit"));
        assert!(parse_time("-1us").is_err());
        assert!(parse_time("us").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("64KiB").unwrap(), Bytes(65536));
        assert_eq!(parse_bytes("1MB").unwrap(), Bytes(1_000_000));
        assert_eq!(parse_bytes("12").unwrap(), Bytes(12));
        assert!(parse_bytes("1.5B").is_err());
        assert!(parse_bytes("3 furlongs").is_err());
    }

    #[test]
    fn bandwidths() {
        assert_eq!(parse_bandwidth("10GB/s").unwrap(), Bandwidth(1e10));
        assert_eq!(parse_bandwidth("100Gbit/s").unwrap(), Bandwidth(12.5e9));
        assert_eq!(parse_bandwidth("8Gbps").unwrap(), Bandwidth(1e9));
        assert_eq!(parse_bandwidth("1GiB/s").unwrap(), Bandwidth(1073741824.0));
        assert!(parse_bandwidth("0GB/s").is_err());
        assert!(parse_bandwidth("10GB").is_err());
        assert_eq!(Bandwidth(1e9).ns_for(1000), 1000.0);
    }
}
