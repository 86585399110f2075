//! Times on the wire: RFC 3339 text, as chrono writes a `DateTime<Utc>`
//! (`2026-11-30T12:00:05.250Z`). Read with chrono's RFC 3339 parser rather
//! than its serde default, which goes through its general format parser
//! (and RFC 2822's). Every time field of a wire type names these, so
//! serde's readers accept what the browser's (`crate::wire_json`, the same
//! chrono parser) accept.

use chrono::{DateTime, Utc};
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;

/// A time read from its RFC 3339 text.
struct Rfc3339(DateTime<Utc>);

impl<'de> Deserialize<'de> for Rfc3339 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Text;
        impl Visitor<'_> for Text {
            type Value = Rfc3339;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an RFC 3339 date and time")
            }

            fn visit_str<E: de::Error>(self, s: &str) -> Result<Rfc3339, E> {
                DateTime::parse_from_rfc3339(s)
                    .map(|t| Rfc3339(t.with_timezone(&Utc)))
                    .map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Text)
    }
}

/// `#[serde(deserialize_with = "crate::wire_time::rfc3339")]`
pub fn rfc3339<'de, D: Deserializer<'de>>(deserializer: D) -> Result<DateTime<Utc>, D::Error> {
    Rfc3339::deserialize(deserializer).map(|t| t.0)
}

/// `#[serde(default, deserialize_with = "crate::wire_time::rfc3339_opt")]`:
/// absent or `null` is `None`.
pub fn rfc3339_opt<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<DateTime<Utc>>, D::Error> {
    Option::<Rfc3339>::deserialize(deserializer).map(|t| t.map(|t| t.0))
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, TimeZone, Utc};
    use serde::{Deserialize, Serialize};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Times {
        #[serde(deserialize_with = "super::rfc3339")]
        at: DateTime<Utc>,
        #[serde(default, deserialize_with = "super::rfc3339_opt")]
        until: Option<DateTime<Utc>>,
    }

    #[test]
    fn reads_what_chrono_writes() {
        let t = Times {
            at: Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 5).unwrap()
                + chrono::Duration::nanoseconds(250_000_123),
            until: Some(Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap()),
        };
        let text = serde_json::to_string(&t).unwrap();
        assert_eq!(serde_json::from_str::<Times>(&text).unwrap(), t);
    }

    #[test]
    fn offsets_absence_and_null() {
        let t: Times = serde_json::from_str(r#"{"at": "2026-11-30T13:00:05+01:00"}"#).unwrap();
        assert_eq!(t.at, Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 5).unwrap());
        assert_eq!(t.until, None);
        let t: Times =
            serde_json::from_str(r#"{"at": "2026-11-30T12:00:05Z", "until": null}"#).unwrap();
        assert_eq!(t.until, None);
        assert!(serde_json::from_str::<Times>(r#"{"at": "30 Nov 2026"}"#).is_err());
    }
}
