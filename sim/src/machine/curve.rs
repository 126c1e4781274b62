//! Size-dependent parameters: a constant, or a step table over message
//! sizes, as SMPI's `bw-factor` and Dimemas's piecewise models give them.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

use crate::units::Bytes;

/// One step of a table: from `size` bytes on (up to the next step), `value`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step<T> {
    /// The first message size this step covers.
    pub size: Bytes,
    /// The value for sizes from `size` up to the next step.
    pub value: T,
}

/// A parameter that may depend on the message size.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Curve<T> {
    /// The same for every size.
    Const(T),
    /// Steps in increasing size order, the first at size 0.
    Table(Vec<Step<T>>),
}

impl<T: Copy> Curve<T> {
    /// The value for a message of `bytes` bytes: the last step at or below it.
    pub fn at(&self, bytes: u64) -> T {
        match self {
            Curve::Const(v) => *v,
            Curve::Table(steps) => {
                // Tables are short (a handful of steps): a scan beats a search.
                let mut v = steps[0].value;
                for s in &steps[1..] {
                    if s.size.0 > bytes {
                        break;
                    }
                    v = s.value;
                }
                v
            }
        }
    }

    /// Every value it takes, in size order.
    pub fn values(&self) -> Vec<T> {
        match self {
            Curve::Const(v) => vec![*v],
            Curve::Table(steps) => steps.iter().map(|s| s.value).collect(),
        }
    }

    /// Applies `f` to every value (scaling a curve for a what-if study).
    pub fn map(&self, f: impl Fn(T) -> T) -> Curve<T> {
        match self {
            Curve::Const(v) => Curve::Const(f(*v)),
            Curve::Table(steps) => Curve::Table(
                steps
                    .iter()
                    .map(|s| Step {
                        size: s.size,
                        value: f(s.value),
                    })
                    .collect(),
            ),
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Curve<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        // Not `#[serde(untagged)]`: it would hide the inner error (a bad
        // unit) behind "did not match any variant". Arrays are tables.
        let value = toml::Value::deserialize(d)?;
        if let toml::Value::Array(_) = value {
            let steps: Vec<Step<T>> = value.try_into().map_err(D::Error::custom)?;
            if steps.is_empty() {
                return Err(D::Error::custom("a size table needs at least one step"));
            }
            if steps[0].size.0 != 0 {
                return Err(D::Error::custom("a size table's first step must be at size 0"));
            }
            if steps.windows(2).any(|w| w[1].size <= w[0].size) {
                return Err(D::Error::custom("a size table's sizes must increase"));
            }
            return Ok(Curve::Table(steps));
        }
        T::deserialize(value).map(Curve::Const).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;

    #[derive(Deserialize)]
    struct Doc {
        c: Curve<Time>,
    }

    #[test]
    fn constant_and_table() {
        let d: Doc = toml::from_str("c = \"2us\"").unwrap();
        assert_eq!(d.c.at(1 << 30).0, 2000.0);
        let d: Doc = toml::from_str(
            "c = [{ size = 0, value = \"1us\" }, { size = \"1KiB\", value = \"3us\" }, { size = \"1MiB\", value = \"9us\" }]",
        )
        .unwrap();
        assert_eq!(d.c.at(0).0, 1000.0);
        assert_eq!(d.c.at(1023).0, 1000.0);
        assert_eq!(d.c.at(1024).0, 3000.0);
        assert_eq!(d.c.at(1 << 20).0, 9000.0);
    }

    #[test]
    fn bad_tables() {
        let e = toml::from_str::<Doc>("c = [{ size = 5, value = \"1us\" }]")
            .err()
            .unwrap();
        assert!(e.to_string().contains("first step must be at size 0"), "{e}");
        let e = toml::from_str::<Doc>("c = [{ size = 0, value = \"1us\" }, { size = 0, value = \"2us\" }]")
            .err()
            .unwrap();
        assert!(e.to_string().contains("must increase"), "{e}");
        let e = toml::from_str::<Doc>("c = \"1 fortnight\"").err().unwrap();
        assert!(e.to_string().contains("unknown time unit"), "{e}");
    }
}
