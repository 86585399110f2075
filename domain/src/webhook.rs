//! Webhooks on the wire: what a subscription asks for
//! ([`WebhookWrite`]), what the service answers ([`Webhook`],
//! [`Delivery`]), and the event kinds a subscription names
//! ([`WebhookEvent`]), named like the event stream's.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

wire_names! {
    /// What a webhook can be told about.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum WebhookEvent {
        /// A route stopped for a person (`action_required`).
        #[serde(rename = "route.action_required")]
        #[strum(serialize = "route.action_required")]
        RouteActionRequired,
        /// A dispatch is due: a retry, a switch or a manual retry waits for
        /// its caller to claim it.
        #[serde(rename = "dispatch.due")]
        #[strum(serialize = "dispatch.due")]
        DispatchDue,
        /// A route ended: its caller's session is over.
        #[serde(rename = "route.completed")]
        #[strum(serialize = "route.completed")]
        RouteCompleted,
        /// A route was cancelled.
        #[serde(rename = "route.cancelled")]
        #[strum(serialize = "route.cancelled")]
        RouteCancelled,
        /// A shared circuit opened (or opened again after a failed probe).
        #[serde(rename = "circuit.opened")]
        #[strum(serialize = "circuit.opened")]
        CircuitOpened,
        /// A shared circuit closed: its waiting routes go on.
        #[serde(rename = "circuit.closed")]
        #[strum(serialize = "circuit.closed")]
        CircuitClosed,
    }
}

wire_names! {
    /// Where one delivery is.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum DeliveryState {
        /// Not delivered yet: waiting for its turn or its next attempt.
        Pending,
        /// The receiver answered 2xx.
        Delivered,
        /// Every attempt within the retry window failed; the next
        /// delivery went on.
        Failed,
    }
}

/// `POST /api/v1/webhooks`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct WebhookWrite {
    /// Where deliveries are posted: `http` or `https`.
    pub url: String,
    /// What to deliver (at least one).
    pub events: Vec<WebhookEvent>,
    /// The signing secret (16 to 256 characters): each delivery carries
    /// an HMAC-SHA256 of its timestamp and body under it.
    pub secret: String,
}

/// A subscription as the service answers it (never its secret).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Webhook {
    pub id: String,
    pub url: String,
    pub events: Vec<WebhookEvent>,
    #[serde(deserialize_with = "crate::wire_time::rfc3339")]
    pub created_at: DateTime<Utc>,
    /// Deliveries not delivered yet.
    pub pending: i64,
    /// Deliveries that failed for good.
    pub failed: i64,
    /// The last error of the delivery at the head of the queue, if its
    /// last attempt failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// One delivery of a subscription's log, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Delivery {
    pub id: String,
    pub event: WebhookEvent,
    pub state: DeliveryState,
    pub attempts: i64,
    /// The receiver's last HTTP status, if it answered at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_status: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    #[serde(deserialize_with = "crate::wire_time::rfc3339")]
    pub created_at: DateTime<Utc>,
    /// When the next attempt is due (pending deliveries).
    #[serde(
        default,
        deserialize_with = "crate::wire_time::rfc3339_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// The body posted, exactly as signed.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub body: serde_json::Value,
}

/// `GET /api/v1/webhooks/{id}/deliveries`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeliveryLog {
    pub webhook: Webhook,
    pub deliveries: Vec<Delivery>,
}

#[cfg(any(test, feature = "reader"))]
mod read {
    use super::*;
    use crate::wire_json::{Error, Fields, FromJson};
    use serde_json::Value;

    impl FromJson for Webhook {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(Webhook {
                id: o.get("id")?,
                url: o.get("url")?,
                events: o.get("events")?,
                created_at: o.get("created_at")?,
                pending: o.get("pending")?,
                failed: o.get("failed")?,
                last_error: o.get("last_error")?,
            })
        }
    }

    impl FromJson for Delivery {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(Delivery {
                id: o.get("id")?,
                event: o.get("event")?,
                state: o.get("state")?,
                attempts: o.get("attempts")?,
                last_status: o.get("last_status")?,
                last_error: o.get("last_error")?,
                created_at: o.get("created_at")?,
                next_attempt_at: o.get("next_attempt_at")?,
                body: o.get("body")?,
            })
        }
    }

    impl FromJson for DeliveryLog {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(DeliveryLog {
                webhook: o.get("webhook")?,
                deliveries: o.get("deliveries")?,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_names_match_the_stream() {
        assert_eq!(
            WebhookEvent::parse("route.action_required"),
            Some(WebhookEvent::RouteActionRequired)
        );
        assert_eq!(WebhookEvent::DispatchDue.as_str(), "dispatch.due");
        let w: WebhookWrite = serde_json::from_str(
            r#"{"url":"https://x.example/h","events":["circuit.opened"],"secret":"0123456789abcdef"}"#,
        )
        .unwrap();
        assert_eq!(w.events, [WebhookEvent::CircuitOpened]);
        assert!(serde_json::from_str::<WebhookWrite>(
            r#"{"url":"https://x.example/h","events":["route.nope"],"secret":"0123456789abcdef"}"#
        )
        .is_err());
    }

    #[test]
    fn the_browser_reads_a_webhook_as_serde_does() {
        let text = r#"{"id":"w1","url":"https://x.example/h","events":["dispatch.due"],
            "created_at":"2026-12-08T10:00:00Z","pending":2,"failed":0}"#;
        let read: Webhook = crate::wire_json::read(text).unwrap();
        assert_eq!(read, serde_json::from_str::<Webhook>(text).unwrap());
        let log = r#"{"webhook":{"id":"w1","url":"https://x.example/h","events":["dispatch.due"],
            "created_at":"2026-12-08T10:00:00Z","pending":1,"failed":0,"last_error":"503"},
            "deliveries":[{"id":"dl_1","event":"dispatch.due","state":"pending","attempts":2,
            "last_status":503,"last_error":"503","created_at":"2026-12-08T10:00:01Z",
            "next_attempt_at":"2026-12-08T10:00:05Z","body":{"id":"dl_1"}}]}"#;
        let read: DeliveryLog = crate::wire_json::read(log).unwrap();
        assert_eq!(read, serde_json::from_str::<DeliveryLog>(log).unwrap());
    }
}
