//! Reading one nested table of a TOML document into a type, keeping the
//! document's positions for errors: models read `[model.NAME]` this way,
//! so the machine schema needs no field per model.

use serde::de::{DeserializeOwned, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use std::fmt;
use std::marker::PhantomData;

/// Walks `path` (table keys) down a map, then deserializes the value there.
struct Pick<'p, T> {
    path: &'p [&'p str],
    _t: PhantomData<T>,
}

impl<'de, T: DeserializeOwned> DeserializeSeed<'de> for Pick<'_, T> {
    type Value = Option<T>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<T>, D::Error> {
        match self.path.split_first() {
            None => T::deserialize(d).map(Some),
            Some(_) => d.deserialize_map(self),
        }
    }
}

impl<'de, T: DeserializeOwned> Visitor<'de> for Pick<'_, T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a table")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<T>, A::Error> {
        let (first, rest) = self.path.split_first().expect("visited with a non-empty path");
        let mut found = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == *first {
                found = map.next_value_seed(Pick::<T> {
                    path: rest,
                    _t: PhantomData,
                })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// The value at `path` in the TOML `source`, as `T`; `None` if absent.
pub fn table<T: DeserializeOwned>(source: &str, path: &[&str]) -> Result<Option<T>, toml::de::Error> {
    Pick::<T> {
        path,
        _t: PhantomData,
    }
    .deserialize(toml::Deserializer::new(source))
}
