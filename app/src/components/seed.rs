//! An island's starting data. The server writes an island's props into the
//! page as JSON; the browser reads them back. Leptos' `#[island]` also
//! serialises the props whenever the island's function runs, in the browser
//! too, where the text is never used: through [`Seed`] that work is a unit,
//! so serialisers of the wire types it carries (and chrono's formatting
//! behind them) stay out of the WASM bundle.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Props the server sends an island: serialised as `T` on the server,
/// read as `T` in the browser.
#[derive(Debug, Clone, PartialEq)]
pub struct Seed<T>(pub T);

impl<T> Seed<T> {
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> From<T> for Seed<T> {
    fn from(value: T) -> Self {
        Seed(value)
    }
}

/// Read with [`domain::wire_json::StructsAsMaps`], like every other JSON
/// host builds read.
#[cfg(not(feature = "hydrate"))]
impl<'de, T: Deserialize<'de>> Deserialize<'de> for Seed<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(domain::wire_json::StructsAsMaps(deserializer)).map(Seed)
    }
}

/// In the browser, read like every other JSON there: as a `Value`, then
/// by `T`'s [`domain::wire_json::FromJson`] reader.
#[cfg(feature = "hydrate")]
impl<'de, T: domain::wire_json::FromJson> Deserialize<'de> for Seed<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        T::from_json(&value)
            .map(Seed)
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(not(feature = "hydrate"))]
impl<T: Serialize> Serialize for Seed<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// In the browser the island's serialised props are thrown away (the page
/// already holds them), so there is nothing to write.
#[cfg(feature = "hydrate")]
impl<T> Serialize for Seed<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_unit()
    }
}

#[cfg(test)]
mod tests {
    use super::Seed;

    #[test]
    fn seeds_travel_as_their_value() {
        let seed = Seed(vec![("a".to_string(), 1)]);
        let text = serde_json::to_string(&seed).unwrap();
        assert_eq!(text, r#"[["a",1]]"#);
        let back: Seed<Vec<(String, i32)>> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, seed);
    }
}
