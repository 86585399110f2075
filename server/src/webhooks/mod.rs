//! Webhooks: subscriptions to route and circuit events, delivered as
//! signed HTTP posts from durable rows.
//!
//! - [`events`]: which committed event is which webhook event, and the
//!   body posted (pure).
//! - [`sign`]: the `Kandev-Signature` HMAC (pure).
//! - [`target`]: where a delivery may go (SSRF safety).
//! - [`cli`]: `kandev-recovery webhooks …` against a running server.
//! - this module: the service behind the API and the CLI
//!   ([`Webhooks`]), and the delivery loop ([`run`]).
//!
//! Deliveries never sit in a transition's way: a route commits its event
//! as always; the loop reads committed events afterwards, turns them into
//! delivery rows (one transaction per subscription, fenced by its
//! cursors), and posts each subscription's deliveries one at a time,
//! oldest first, retrying a failure with growing pauses for a bounded
//! time ([`RETRY_WINDOW`]) before it is marked failed and the next goes.
//! A slow or hanging receiver holds up its own subscription only.

pub mod cli;
pub mod events;
pub mod sign;
pub mod target;

use crate::clock::SharedClock;
use crate::routes::Signals;
use crate::store::{Attempted, DeliveryRow, DynStore, StoreError, WebhookRow};
use domain::webhook::{Delivery, DeliveryLog, DeliveryState, Webhook, WebhookEvent, WebhookWrite};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a receiver has to answer one delivery.
pub const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a failing delivery is retried before it is marked failed.
pub const RETRY_WINDOW: Duration = Duration::from_secs(24 * 3600);
/// The first pause after a failure; each next one doubles, up to
/// [`MAX_PAUSE`].
pub const FIRST_PAUSE: Duration = Duration::from_secs(1);
pub const MAX_PAUSE: Duration = Duration::from_secs(600);
/// A delivery's lease: the timeout and a margin. A server that dies
/// mid-delivery leaves it to be sent again once this runs out.
const LEASE: Duration = Duration::from_secs(30);
/// How often the loop looks without being woken.
const POLL: Duration = Duration::from_secs(1);
/// Events turned into deliveries per subscription and pass.
const PAGE: i64 = 200;
/// Subscriptions a server may have at most.
pub const MAX_WEBHOOKS: usize = 100;

/// What is wrong with a subscription request, or what failed.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// The field and why.
    #[error("{field}: {message}")]
    Invalid {
        field: &'static str,
        message: String,
    },
    #[error("no webhook has this id")]
    NotFound,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The pause before attempt `attempts + 1` after `attempts` failures.
pub fn pause_after(attempts: i64) -> Duration {
    let doublings = attempts.clamp(1, 20) - 1;
    FIRST_PAUSE.saturating_mul(1u32 << doublings).min(MAX_PAUSE)
}

/// The service behind the API and the command line.
#[derive(Clone)]
pub struct Webhooks {
    store: DynStore,
    clock: SharedClock,
    /// `serve --allow-private-webhooks`.
    allow_private: bool,
    /// Subscriptions with a delivery in flight from this server.
    in_flight: Arc<Mutex<HashSet<String>>>,
    /// Told when an attempt is recorded: the loop goes on with the next
    /// delivery at once rather than at its next look.
    finished: Arc<tokio::sync::Notify>,
}

impl Webhooks {
    pub fn new(store: DynStore, clock: SharedClock, allow_private: bool) -> Webhooks {
        Webhooks {
            store,
            clock,
            allow_private,
            in_flight: Arc::default(),
            finished: Arc::default(),
        }
    }

    /// Checks and stores a subscription; it hears of events from now on.
    pub async fn create(&self, w: &WebhookWrite) -> Result<Webhook, WebhookError> {
        let invalid = |field, message: String| WebhookError::Invalid { field, message };
        let t = target::parse(&w.url).map_err(|m| invalid("url", m))?;
        target::resolve(&t, self.allow_private)
            .await
            .map_err(|m| invalid("url", m))?;
        if w.events.is_empty() {
            return Err(invalid("events", "name at least one event".into()));
        }
        let secret_len = w.secret.chars().count();
        if !(16..=256).contains(&secret_len) {
            return Err(invalid(
                "secret",
                format!("must be 16 to 256 characters, not {secret_len}"),
            ));
        }
        if self.store.list_webhooks().await?.len() >= MAX_WEBHOOKS {
            return Err(invalid(
                "url",
                format!("this server has {MAX_WEBHOOKS} webhooks already; remove one first"),
            ));
        }
        let mut names: Vec<&str> = w.events.iter().map(|e| e.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        let row = WebhookRow {
            id: format!("wh_{}", uuid::Uuid::new_v4().simple()),
            url: t.url.to_string(),
            events: names.join(","),
            secret: w.secret.clone(),
            created_at_ms: self.clock.now_ms(),
            route_cursor: 0,
            circuit_cursor: 0,
        };
        let row = self.store.insert_webhook(&row).await?;
        self.view(&row).await
    }

    pub async fn list(&self) -> Result<Vec<Webhook>, WebhookError> {
        let mut out = Vec::new();
        for row in self.store.list_webhooks().await? {
            out.push(self.view(&row).await?);
        }
        Ok(out)
    }

    /// Removes a subscription with its deliveries; answers its view.
    pub async fn remove(&self, id: &str) -> Result<Webhook, WebhookError> {
        let row = self.row(id).await?;
        let view = self.view(&row).await?;
        if !self.store.delete_webhook(id).await? {
            return Err(WebhookError::NotFound);
        }
        Ok(view)
    }

    /// A subscription's delivery log, newest first.
    pub async fn deliveries(&self, id: &str, limit: i64) -> Result<DeliveryLog, WebhookError> {
        let row = self.row(id).await?;
        let deliveries = self
            .store
            .list_deliveries(id, limit)
            .await?
            .into_iter()
            .map(delivery_view)
            .collect::<Result<_, _>>()?;
        Ok(DeliveryLog {
            webhook: self.view(&row).await?,
            deliveries,
        })
    }

    async fn row(&self, id: &str) -> Result<WebhookRow, WebhookError> {
        self.store
            .list_webhooks()
            .await?
            .into_iter()
            .find(|w| w.id == id)
            .ok_or(WebhookError::NotFound)
    }

    async fn view(&self, row: &WebhookRow) -> Result<Webhook, WebhookError> {
        let (pending, failed) = self.store.delivery_counts(&row.id).await?;
        let head = self.store.list_deliveries(&row.id, 1).await?;
        Ok(Webhook {
            id: row.id.clone(),
            url: row.url.clone(),
            events: row
                .events
                .split(',')
                .filter_map(WebhookEvent::parse)
                .collect(),
            created_at: crate::clock::from_ms(row.created_at_ms),
            pending,
            failed,
            last_error: head
                .into_iter()
                .find(|d| d.state == "pending")
                .and_then(|d| d.last_error),
        })
    }

    /// One pass of the loop: turns the events committed since each
    /// subscription's cursors into its deliveries, then starts the due
    /// ones. Answers how many subscriptions there are.
    pub async fn pass(&self) -> Result<usize, StoreError> {
        let hooks = self.store.list_webhooks().await?;
        for w in &hooks {
            self.fan_out_one(w).await?;
        }
        self.deliver_due(&hooks).await?;
        Ok(hooks.len())
    }

    async fn fan_out_one(&self, w: &WebhookRow) -> Result<usize, StoreError> {
        let wanted: Vec<WebhookEvent> = w
            .events
            .split(',')
            .filter_map(WebhookEvent::parse)
            .collect();
        let routes = self.store.events_after(w.route_cursor, None, PAGE).await?;
        let circuits = self
            .store
            .circuit_events_after(w.circuit_cursor, PAGE)
            .await?;
        if routes.is_empty() && circuits.is_empty() {
            return Ok(0);
        }
        let now = self.clock.now_ms();
        let mut deliveries = Vec::new();
        let mut add =
            |read: Result<Option<(WebhookEvent, serde_json::Value)>, String>, at_ms| match read {
                Ok(Some((event, data))) if wanted.contains(&event) => {
                    let id = format!("dl_{}", uuid::Uuid::new_v4().simple());
                    deliveries.push(DeliveryRow {
                        seq: 0,
                        body: events::body(&id, event, at_ms, data),
                        id,
                        webhook_id: w.id.clone(),
                        event: event.as_str().to_string(),
                        state: DeliveryState::Pending.as_str().to_string(),
                        attempts: 0,
                        next_at_ms: now,
                        last_status: None,
                        last_error: None,
                        created_at_ms: now,
                    });
                }
                Ok(_) => {}
                Err(why) => tracing::error!(webhook = %w.id, %why, "an event is skipped"),
            };
        // Route events first, then circuit events: each in commit order.
        for e in &routes {
            add(events::route_data(e), e.created_at);
        }
        for e in &circuits {
            add(events::circuit_data(e), e.created_at);
        }
        let route_cursor = routes.last().map_or(w.route_cursor, |e| e.id);
        let circuit_cursor = circuits.last().map_or(w.circuit_cursor, |e| e.id);
        let n = deliveries.len();
        let moved = self
            .store
            .add_deliveries(
                &w.id,
                (w.route_cursor, w.circuit_cursor),
                route_cursor,
                circuit_cursor,
                &deliveries,
            )
            .await?;
        Ok(if moved { n } else { 0 })
    }

    /// Starts a delivery for every subscription whose oldest pending
    /// delivery is due and that has none in flight. Answers how many
    /// started.
    async fn deliver_due(&self, hooks: &[WebhookRow]) -> Result<usize, StoreError> {
        let mut started = 0;
        for w in hooks.iter().cloned() {
            if !self
                .in_flight
                .lock()
                .expect("not poisoned")
                .insert(w.id.clone())
            {
                continue;
            }
            let head = self
                .store
                .take_head(&w.id, self.clock.now_ms(), LEASE.as_millis() as i64)
                .await;
            match head {
                Ok(Some(d)) => {
                    started += 1;
                    let this = self.clone();
                    tokio::spawn(async move {
                        this.attempt(&w, &d).await;
                        this.in_flight.lock().expect("not poisoned").remove(&w.id);
                        this.finished.notify_one();
                    });
                }
                other => {
                    self.in_flight.lock().expect("not poisoned").remove(&w.id);
                    other?;
                }
            }
        }
        Ok(started)
    }

    /// One attempt of `d`, recorded.
    async fn attempt(&self, w: &WebhookRow, d: &DeliveryRow) {
        let (status, error) = match self.post(w, d).await {
            Ok(status) if (200..300).contains(&status) => (Some(status), None),
            Ok(status) => (
                Some(status),
                Some(format!("the receiver answered {status}")),
            ),
            Err(e) => (None, Some(e)),
        };
        let now = self.clock.now_ms();
        let outcome = match &error {
            None => Attempted::Delivered,
            Some(_) => {
                let next = now + pause_after(d.attempts + 1).as_millis() as i64;
                if next - d.created_at_ms > RETRY_WINDOW.as_millis() as i64 {
                    Attempted::GaveUp
                } else {
                    Attempted::Retry { at_ms: next }
                }
            }
        };
        if let Some(e) = &error {
            tracing::warn!(webhook = %w.id, delivery = %d.id, attempt = d.attempts + 1, error = %e, "a webhook delivery failed");
        }
        metrics::counter!(crate::meters::WEBHOOK_ATTEMPTS, "outcome" => match outcome {
            Attempted::Delivered => "delivered",
            Attempted::Retry { .. } => "retry",
            Attempted::GaveUp => "failed",
        })
        .increment(1);
        if let Err(e) = self
            .store
            .finish_attempt(d, &outcome, status.map(i64::from), error.as_deref())
            .await
        {
            // The lease runs out and the delivery is tried again.
            tracing::error!(webhook = %w.id, delivery = %d.id, error = %e, "recording a webhook attempt failed");
        }
    }

    /// Posts `d` to its receiver, signed; answers the HTTP status.
    async fn post(&self, w: &WebhookRow, d: &DeliveryRow) -> Result<u16, String> {
        let t = target::parse(&w.url)?;
        let addr = target::resolve(&t, self.allow_private).await?;
        let client = target::client(&t, addr, DELIVERY_TIMEOUT).map_err(|e| e.to_string())?;
        let timestamp = chrono::Utc::now().timestamp();
        let response = client
            .post(t.url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::USER_AGENT, "kandev-recovery-webhooks")
            .header(sign::DELIVERY_HEADER, &d.id)
            .header(sign::EVENT_HEADER, &d.event)
            .header(
                sign::SIGNATURE_HEADER,
                sign::signature(&w.secret, timestamp, &d.body),
            )
            .body(d.body.clone())
            .send()
            .await
            .map_err(|e| {
                if e.is_timeout() {
                    format!("no answer within {} s", DELIVERY_TIMEOUT.as_secs())
                } else {
                    format!("cannot reach the receiver: {e}")
                }
            })?;
        Ok(response.status().as_u16())
    }
}

fn delivery_view(d: DeliveryRow) -> Result<Delivery, StoreError> {
    let corrupt = |what: &str| StoreError::Unavailable(format!("delivery {}: {what}", d.id));
    let state = DeliveryState::parse(&d.state).ok_or_else(|| corrupt("unknown state"))?;
    Ok(Delivery {
        event: WebhookEvent::parse(&d.event).ok_or_else(|| corrupt("unknown event"))?,
        state,
        attempts: d.attempts,
        last_status: d.last_status,
        last_error: d.last_error.clone(),
        created_at: crate::clock::from_ms(d.created_at_ms),
        next_attempt_at: (state == DeliveryState::Pending)
            .then(|| crate::clock::from_ms(d.next_at_ms)),
        body: serde_json::from_str(&d.body).map_err(|_| corrupt("body is not JSON"))?,
        id: d.id,
    })
}

/// The delivery loop: after every commit (and every [`POLL`], and when
/// the test clock moves) turns new events into deliveries and starts the
/// due ones; returns at shutdown.
pub async fn run(webhooks: Webhooks, signals: Arc<Signals>) {
    let mut commits = signals.events.subscribe();
    let mut clock_moved = webhooks.clock.subscribe();
    // With no subscription, a commit is no reason to look: the loop looks
    // every POLL only, so an installation without webhooks pays one small
    // read a second, not one per transition.
    let mut any = true;
    loop {
        match webhooks.pass().await {
            Ok(n) => any = n > 0,
            Err(e) => tracing::error!(error = %e, "a webhook pass failed; will retry"),
        }
        let committed = async {
            loop {
                match commits.recv().await {
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                        return std::future::pending().await
                    }
                    _ if any => return,
                    _ => {}
                }
            }
        };
        tokio::select! {
            _ = committed => {}
            _ = clock_moved.changed() => {}
            _ = webhooks.finished.notified() => {}
            _ = tokio::time::sleep(POLL) => {}
            _ = signals.shutdown.cancelled() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_double_from_a_second_up_to_ten_minutes() {
        let secs: Vec<u64> = (1..=12).map(|a| pause_after(a).as_secs()).collect();
        assert_eq!(secs, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 600, 600]);
    }
}
