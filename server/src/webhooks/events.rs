//! What a committed event is to a webhook (pure): which
//! [`WebhookEvent`] a route or circuit event is, if any, and the body a
//! delivery posts.

use crate::store::{CircuitEventRow, EventRow};
use domain::route::{EventKind, RouteSnapshot, RouteState};
use domain::webhook::WebhookEvent;
use serde_json::{json, Value};

/// The webhook event a route event is, read from its kind and the state
/// it left the route in. A route that arrives in `retrying` or
/// `switching` has a dispatch waiting for its caller (a held switch, an
/// acknowledgement or a late effect leave one that was due already, so
/// they are not told again).
pub fn of_route(kind: EventKind, route: &RouteSnapshot) -> Option<WebhookEvent> {
    match route.state {
        RouteState::ActionRequired => Some(WebhookEvent::RouteActionRequired),
        RouteState::Completed => Some(WebhookEvent::RouteCompleted),
        RouteState::Cancelled => Some(WebhookEvent::RouteCancelled),
        RouteState::Retrying | RouteState::Switching
            if !matches!(
                kind,
                EventKind::Held | EventKind::DispatchAcked | EventKind::LateEffect
            ) =>
        {
            Some(WebhookEvent::DispatchDue)
        }
        _ => None,
    }
}

/// The webhook event a circuit event is (`circuit.opened`,
/// `circuit.reopened` after a failed probe, `circuit.closed`); extending
/// an open circuit or taking its probe is not one.
pub fn of_circuit(kind: &str) -> Option<WebhookEvent> {
    match kind {
        "circuit.opened" | "circuit.reopened" => Some(WebhookEvent::CircuitOpened),
        "circuit.closed" => Some(WebhookEvent::CircuitClosed),
        _ => None,
    }
}

/// A route event's webhook event and the `data` of its body; `None` when
/// it is none, or its payload does not read (logged by the caller).
pub fn route_data(e: &EventRow) -> Result<Option<(WebhookEvent, Value)>, String> {
    let Ok(kind) = e.kind.parse::<EventKind>() else {
        return Ok(None);
    };
    let route: RouteSnapshot = serde_json::from_str(&e.payload)
        .map_err(|err| format!("route event {} does not read: {err}", e.id))?;
    let Some(event) = of_route(kind, &route) else {
        return Ok(None);
    };
    let actor: Option<Value> = e
        .actor
        .as_deref()
        .and_then(|a| serde_json::from_str(a).ok());
    let mut data = json!({"event_id": e.id, "event_kind": kind, "route": route});
    if let Some(actor) = actor {
        data["actor"] = actor;
    }
    Ok(Some((event, data)))
}

/// A circuit event's webhook event and the `data` of its body.
pub fn circuit_data(e: &CircuitEventRow) -> Result<Option<(WebhookEvent, Value)>, String> {
    let Some(event) = of_circuit(&e.kind) else {
        return Ok(None);
    };
    let circuit: Value = serde_json::from_str(&e.payload)
        .map_err(|err| format!("circuit event {} does not read: {err}", e.id))?;
    // An administrator's release names no route (its payload names the
    // actor): `route_id` is null then.
    let route_id = (!e.route_id.is_empty()).then_some(e.route_id.as_str());
    Ok(Some((
        event,
        json!({"circuit_event_id": e.id, "route_id": route_id, "circuit": circuit}),
    )))
}

/// The body a delivery posts: its id (receivers de-duplicate by it), the
/// event, when it happened, and its data.
pub fn body(delivery_id: &str, event: WebhookEvent, at_ms: i64, data: Value) -> String {
    json!({
        "id": delivery_id,
        "event": event,
        "created_at": crate::clock::from_ms(at_ms),
        "data": data,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(state: RouteState) -> RouteSnapshot {
        let mut v: Value = serde_json::from_str(include_str!("snapshot.json")).unwrap();
        v["state"] = json!(state);
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn route_events_map_by_the_state_they_leave() {
        use EventKind::*;
        let cases = [
            (
                Failure,
                RouteState::ActionRequired,
                Some(WebhookEvent::RouteActionRequired),
            ),
            (
                Action,
                RouteState::Completed,
                Some(WebhookEvent::RouteCompleted),
            ),
            (
                Action,
                RouteState::Cancelled,
                Some(WebhookEvent::RouteCancelled),
            ),
            (Fired, RouteState::Retrying, Some(WebhookEvent::DispatchDue)),
            (
                Failure,
                RouteState::Switching,
                Some(WebhookEvent::DispatchDue),
            ),
            (
                Action,
                RouteState::Retrying,
                Some(WebhookEvent::DispatchDue),
            ),
            (Held, RouteState::Switching, None),
            (DispatchAcked, RouteState::Switching, None),
            (Failure, RouteState::RetryWait, None),
            (Success, RouteState::Active, None),
        ];
        for (kind, state, want) in cases {
            assert_eq!(of_route(kind, &snapshot(state)), want, "{kind} → {state}");
        }
    }

    #[test]
    fn circuits_tell_openings_and_closings_only() {
        assert_eq!(
            of_circuit("circuit.opened"),
            Some(WebhookEvent::CircuitOpened)
        );
        assert_eq!(
            of_circuit("circuit.reopened"),
            Some(WebhookEvent::CircuitOpened)
        );
        assert_eq!(
            of_circuit("circuit.closed"),
            Some(WebhookEvent::CircuitClosed)
        );
        assert_eq!(of_circuit("circuit.extended"), None);
        assert_eq!(of_circuit("circuit.probe_claimed"), None);
    }
}
