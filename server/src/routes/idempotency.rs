//! Idempotent route creation. `POST /routes` with an `Idempotency-Key`
//! header (the IETF httpapi draft of that name) creates at most one route
//! per key and caller: a client that lost the answer — its connection
//! closed by a restarting server after the request arrived — sends the same
//! request with the same key again and gets the route it created, where
//! without a key it could not tell whether to create it again (and two
//! routes would run one prompt).
//!
//! The key is stored with the route, in the transaction that inserts it
//! (`route_keys`), so it names exactly the route that committed. Keys are
//! the caller's own: the same key from another token or person is another
//! key, and never answers with someone else's route.

use domain::api::CreateRoute;
use domain::policy::{FieldError, FieldErrorCode};
use serde_json::json;

/// The request header, as the draft names it.
pub const HEADER: &str = "Idempotency-Key";

/// The longest key kept (a UUID is 36 characters).
pub const MAX_LEN: usize = 255;

/// A client's key for one creation, checked: 1 to [`MAX_LEN`] visible
/// ASCII characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    /// The header's value. The draft writes the key as a structured-field
    /// string (`"8e03…"`); most clients send it bare. Both are read, as
    /// the same key.
    pub fn parse(raw: &str) -> Result<IdempotencyKey, FieldError> {
        let raw = raw.trim();
        let key = raw
            .strip_prefix('"')
            .and_then(|k| k.strip_suffix('"'))
            .unwrap_or(raw);
        if key.is_empty() || key.len() > MAX_LEN {
            return Err(FieldError::out_of_range(
                HEADER,
                "length",
                1,
                MAX_LEN as u64,
            ));
        }
        if !key.bytes().all(|b| b.is_ascii_graphic() && b != b'"') {
            return Err(FieldError::new(
                HEADER,
                FieldErrorCode::InvalidValue,
                "an idempotency key is visible ASCII characters, without spaces or quotes \
                 (a UUID is a good key)",
            ));
        }
        Ok(IdempotencyKey(key.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A key and whose it is: the principal that sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteKey {
    pub scope: String,
    pub key: IdempotencyKey,
}

/// What a creation asked for, in one canonical form: a repeat carries the
/// same, a key reused for another route does not.
pub fn request_of(req: &CreateRoute) -> String {
    json!({
        "profile_id": req.profile_id,
        "caller": {"kind": req.caller.kind, "ref": req.caller.reference},
    })
    .to_string()
}

/// Whether a creation made a route now or answered one made earlier with
/// the same key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Creation {
    Created,
    Replayed,
}

/// The answer to a key reused for a different request.
pub fn reused(route_id: &str) -> FieldError {
    FieldError::new(
        HEADER,
        FieldErrorCode::Duplicate,
        format!(
            "this key already created route `{route_id}` for a different request \
             (profile or caller); send a new key for a new route"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::route::{Caller, CallerKind};

    #[test]
    fn keys_are_read_bare_or_quoted_and_bad_ones_name_the_header() {
        let bare = IdempotencyKey::parse("8e03978e-40d5-43e8-bc93-6894a57f9324").unwrap();
        let quoted = IdempotencyKey::parse(" \"8e03978e-40d5-43e8-bc93-6894a57f9324\" ").unwrap();
        assert_eq!(bare, quoted);
        assert_eq!(bare.as_str(), "8e03978e-40d5-43e8-bc93-6894a57f9324");
        for bad in ["", "\"\"", "a b", "ключ", "a\"b", &"k".repeat(MAX_LEN + 1)] {
            let e = IdempotencyKey::parse(bad).unwrap_err();
            assert_eq!(e.field, HEADER, "{bad:?}");
        }
        assert!(IdempotencyKey::parse(&"k".repeat(MAX_LEN)).is_ok());
    }

    #[test]
    fn a_request_reads_the_same_whatever_its_body_looked_like() {
        let req = |reference: &str| CreateRoute {
            profile_id: domain::ids::ProfileId("p_1".into()),
            caller: Caller {
                kind: CallerKind::Kanban,
                reference: reference.into(),
            },
        };
        assert_eq!(request_of(&req("card-1")), request_of(&req("card-1")));
        assert_ne!(request_of(&req("card-1")), request_of(&req("card-2")));
    }
}
