//! The webhook tables (`webhooks`, `webhook_deliveries`), for both engines
//! from one body like [`super::access`].
//!
//! A subscription keeps two cursors, the last route event and the last
//! circuit event it has turned into deliveries. Turning events into
//! deliveries and moving the cursors is one transaction, fenced by the
//! cursors read (several servers may do it at once; one wins, the others
//! change nothing), so every event becomes a delivery exactly once.
//! Delivering takes the subscription's lease, so at most one delivery per
//! subscription is in flight, and always its oldest pending one: in order.

use super::{PgStore, Result, SqliteStore};
use async_trait::async_trait;

/// A subscription as stored. `events` is a comma-separated list of
/// [`domain::webhook::WebhookEvent`] names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookRow {
    pub id: String,
    pub url: String,
    pub events: String,
    pub secret: String,
    pub created_at_ms: i64,
    /// The last route event and circuit event turned into deliveries.
    pub route_cursor: i64,
    pub circuit_cursor: i64,
}

/// One delivery as stored. `state` is a
/// [`domain::webhook::DeliveryState`] name; `body` the JSON posted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryRow {
    /// Assigned by the store (the order deliveries go out in).
    pub seq: i64,
    pub id: String,
    pub webhook_id: String,
    pub event: String,
    pub body: String,
    pub state: String,
    pub attempts: i64,
    pub next_at_ms: i64,
    pub last_status: Option<i64>,
    pub last_error: Option<String>,
    pub created_at_ms: i64,
}

/// How an attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempted {
    Delivered,
    /// Failed; try again at this time.
    Retry {
        at_ms: i64,
    },
    /// Failed, and the retry window is over.
    GaveUp,
}

/// What operators alert on, for the metrics gauges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebhookGauges {
    /// Pending deliveries whose last attempt failed.
    pub failing: i64,
    /// Deliveries that failed for good.
    pub failed: i64,
    /// When the oldest pending delivery was made.
    pub oldest_pending_ms: Option<i64>,
}

/// Finished deliveries kept per subscription (its delivery log); older
/// ones are deleted as new ones finish.
pub const KEPT_DELIVERIES: i64 = 200;

#[async_trait]
pub trait WebhookStore: Send + Sync {
    /// Inserts a subscription whose cursors start at the newest route and
    /// circuit events: it is told about what happens from now on.
    async fn insert_webhook(&self, row: &WebhookRow) -> Result<WebhookRow>;

    /// Every subscription, oldest first.
    async fn list_webhooks(&self) -> Result<Vec<WebhookRow>>;

    /// Deletes a subscription with its deliveries; answers whether one was.
    async fn delete_webhook(&self, id: &str) -> Result<bool>;

    /// Inserts `deliveries` (in this order) and moves the subscription's
    /// cursors to `route_cursor` and `circuit_cursor` if they are still
    /// `from` (route, circuit); answers whether they were (when not,
    /// another server did it first and nothing was written).
    async fn add_deliveries(
        &self,
        webhook_id: &str,
        from: (i64, i64),
        route_cursor: i64,
        circuit_cursor: i64,
        deliveries: &[DeliveryRow],
    ) -> Result<bool>;

    /// Takes the subscription's lease until `now_ms + lease_ms` when
    /// nobody holds it and its oldest pending delivery is due at `now_ms`;
    /// answers that delivery. `None`: nothing due, or another holds it.
    async fn take_head(
        &self,
        webhook_id: &str,
        now_ms: i64,
        lease_ms: i64,
    ) -> Result<Option<DeliveryRow>>;

    /// Records an attempt of a delivery taken with [`WebhookStore::take_head`]
    /// and gives the lease back.
    async fn finish_attempt(
        &self,
        delivery: &DeliveryRow,
        outcome: &Attempted,
        status: Option<i64>,
        error: Option<&str>,
    ) -> Result<()>;

    /// A subscription's deliveries, newest first, at most `limit`.
    async fn list_deliveries(&self, webhook_id: &str, limit: i64) -> Result<Vec<DeliveryRow>>;

    /// Pending and failed counts of one subscription.
    async fn delivery_counts(&self, webhook_id: &str) -> Result<(i64, i64)>;

    async fn webhook_gauges(&self) -> Result<WebhookGauges>;
}

const WEBHOOK_COLUMNS: &str = "id, url, events, secret, created_at, route_cursor, circuit_cursor";
const DELIVERY_COLUMNS: &str = "seq, id, webhook_id, event, body, state, attempts, next_at, \
     last_status, last_error, created_at";

type WebhookTuple = (String, String, String, String, i64, i64, i64);
type DeliveryTuple = (
    i64,
    String,
    String,
    String,
    String,
    String,
    i64,
    i64,
    Option<i64>,
    Option<String>,
    i64,
);

fn webhook_row(t: WebhookTuple) -> WebhookRow {
    WebhookRow {
        id: t.0,
        url: t.1,
        events: t.2,
        secret: t.3,
        created_at_ms: t.4,
        route_cursor: t.5,
        circuit_cursor: t.6,
    }
}

fn delivery_row(t: DeliveryTuple) -> DeliveryRow {
    DeliveryRow {
        seq: t.0,
        id: t.1,
        webhook_id: t.2,
        event: t.3,
        body: t.4,
        state: t.5,
        attempts: t.6,
        next_at_ms: t.7,
        last_status: t.8,
        last_error: t.9,
        created_at_ms: t.10,
    }
}

macro_rules! impl_webhooks {
    ($store:ty, begin = $begin:expr) => {
        #[async_trait]
        impl WebhookStore for $store {
            async fn insert_webhook(&self, row: &WebhookRow) -> Result<WebhookRow> {
                self.health()?;
                let _w = self.writer().await;
                let stored: WebhookTuple = sqlx::query_as(&format!(
                    "INSERT INTO webhooks ({WEBHOOK_COLUMNS}) VALUES ($1, $2, $3, $4, $5, \
                     (SELECT COALESCE(MAX(id), 0) FROM events), \
                     (SELECT COALESCE(MAX(id), 0) FROM circuit_events)) \
                     RETURNING {WEBHOOK_COLUMNS}"
                ))
                .bind(&row.id)
                .bind(&row.url)
                .bind(&row.events)
                .bind(&row.secret)
                .bind(row.created_at_ms)
                .fetch_one(&self.pool)
                .await?;
                Ok(webhook_row(stored))
            }

            async fn list_webhooks(&self) -> Result<Vec<WebhookRow>> {
                let rows: Vec<WebhookTuple> = sqlx::query_as(&format!(
                    "SELECT {WEBHOOK_COLUMNS} FROM webhooks ORDER BY created_at, id"
                ))
                .fetch_all(&self.pool)
                .await?;
                Ok(rows.into_iter().map(webhook_row).collect())
            }

            async fn delete_webhook(&self, id: &str) -> Result<bool> {
                self.health()?;
                let _w = self.writer().await;
                let mut tx = self.pool.begin_with($begin).await?;
                sqlx::query("DELETE FROM webhook_deliveries WHERE webhook_id = $1")
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                let gone = sqlx::query("DELETE FROM webhooks WHERE id = $1")
                    .bind(id)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                tx.commit().await?;
                Ok(gone == 1)
            }

            async fn add_deliveries(
                &self,
                webhook_id: &str,
                from: (i64, i64),
                route_cursor: i64,
                circuit_cursor: i64,
                deliveries: &[DeliveryRow],
            ) -> Result<bool> {
                self.health()?;
                let _w = self.writer().await;
                let mut tx = self.pool.begin_with($begin).await?;
                let moved = sqlx::query(
                    "UPDATE webhooks SET route_cursor = $1, circuit_cursor = $2 \
                     WHERE id = $3 AND route_cursor = $4 AND circuit_cursor = $5",
                )
                .bind(route_cursor)
                .bind(circuit_cursor)
                .bind(webhook_id)
                .bind(from.0)
                .bind(from.1)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                if moved != 1 {
                    return Ok(false);
                }
                for d in deliveries {
                    sqlx::query(
                        "INSERT INTO webhook_deliveries (id, webhook_id, event, body, state, \
                         attempts, next_at, last_status, last_error, created_at) \
                         VALUES ($1, $2, $3, $4, 'pending', 0, $5, NULL, NULL, $6)",
                    )
                    .bind(&d.id)
                    .bind(webhook_id)
                    .bind(&d.event)
                    .bind(&d.body)
                    .bind(d.next_at_ms)
                    .bind(d.created_at_ms)
                    .execute(&mut *tx)
                    .await?;
                }
                tx.commit().await?;
                Ok(true)
            }

            async fn take_head(
                &self,
                webhook_id: &str,
                now_ms: i64,
                lease_ms: i64,
            ) -> Result<Option<DeliveryRow>> {
                let head: Option<DeliveryTuple> = sqlx::query_as(&format!(
                    "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries \
                     WHERE webhook_id = $1 AND state = 'pending' ORDER BY seq LIMIT 1"
                ))
                .bind(webhook_id)
                .fetch_optional(&self.pool)
                .await?;
                let Some(head) = head.map(delivery_row) else {
                    return Ok(None);
                };
                if head.next_at_ms > now_ms {
                    return Ok(None);
                }
                self.health()?;
                let _w = self.writer().await;
                let leased = sqlx::query(
                    "UPDATE webhooks SET lease_until = $1 \
                     WHERE id = $2 AND (lease_until IS NULL OR lease_until <= $3)",
                )
                .bind(now_ms + lease_ms)
                .bind(webhook_id)
                .bind(now_ms)
                .execute(&self.pool)
                .await?
                .rows_affected();
                if leased != 1 {
                    return Ok(None);
                }
                // Read again under the lease: another server may have
                // finished the head between the read above and the lease.
                let head: Option<DeliveryTuple> = sqlx::query_as(&format!(
                    "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries \
                     WHERE webhook_id = $1 AND state = 'pending' ORDER BY seq LIMIT 1"
                ))
                .bind(webhook_id)
                .fetch_optional(&self.pool)
                .await?;
                match head.map(delivery_row) {
                    Some(h) if h.next_at_ms <= now_ms => Ok(Some(h)),
                    _ => {
                        sqlx::query("UPDATE webhooks SET lease_until = NULL WHERE id = $1")
                            .bind(webhook_id)
                            .execute(&self.pool)
                            .await?;
                        Ok(None)
                    }
                }
            }

            async fn finish_attempt(
                &self,
                d: &DeliveryRow,
                outcome: &Attempted,
                status: Option<i64>,
                error: Option<&str>,
            ) -> Result<()> {
                self.health()?;
                let _w = self.writer().await;
                let mut tx = self.pool.begin_with($begin).await?;
                let (state, next_at) = match outcome {
                    Attempted::Delivered => ("delivered", d.next_at_ms),
                    Attempted::Retry { at_ms } => ("pending", *at_ms),
                    Attempted::GaveUp => ("failed", d.next_at_ms),
                };
                sqlx::query(
                    "UPDATE webhook_deliveries SET state = $1, attempts = attempts + 1, \
                     next_at = $2, last_status = $3, last_error = $4 WHERE id = $5",
                )
                .bind(state)
                .bind(next_at)
                .bind(status)
                .bind(error)
                .bind(&d.id)
                .execute(&mut *tx)
                .await?;
                sqlx::query("UPDATE webhooks SET lease_until = NULL WHERE id = $1")
                    .bind(&d.webhook_id)
                    .execute(&mut *tx)
                    .await?;
                if state != "pending" {
                    // The log keeps the newest finished deliveries only.
                    sqlx::query(
                        "DELETE FROM webhook_deliveries WHERE webhook_id = $1 \
                         AND state <> 'pending' AND seq < (SELECT seq FROM webhook_deliveries \
                         WHERE webhook_id = $2 AND state <> 'pending' \
                         ORDER BY seq DESC LIMIT 1 OFFSET $3)",
                    )
                    .bind(&d.webhook_id)
                    .bind(&d.webhook_id)
                    .bind(KEPT_DELIVERIES - 1)
                    .execute(&mut *tx)
                    .await?;
                }
                tx.commit().await?;
                Ok(())
            }

            async fn list_deliveries(
                &self,
                webhook_id: &str,
                limit: i64,
            ) -> Result<Vec<DeliveryRow>> {
                let rows: Vec<DeliveryTuple> = sqlx::query_as(&format!(
                    "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = $1 \
                     ORDER BY seq DESC LIMIT $2"
                ))
                .bind(webhook_id)
                .bind(limit)
                .fetch_all(&self.pool)
                .await?;
                Ok(rows.into_iter().map(delivery_row).collect())
            }

            async fn delivery_counts(&self, webhook_id: &str) -> Result<(i64, i64)> {
                let counts: (i64, i64) = sqlx::query_as(
                    "SELECT \
                     (SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id = $1 AND state = 'pending'), \
                     (SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id = $2 AND state = 'failed')",
                )
                .bind(webhook_id)
                .bind(webhook_id)
                .fetch_one(&self.pool)
                .await?;
                Ok(counts)
            }

            async fn webhook_gauges(&self) -> Result<WebhookGauges> {
                let (failing, failed, oldest_pending_ms): (i64, i64, Option<i64>) =
                    sqlx::query_as(
                        "SELECT \
                         (SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'pending' AND attempts > 0), \
                         (SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'failed'), \
                         (SELECT MIN(created_at) FROM webhook_deliveries WHERE state = 'pending')",
                    )
                    .fetch_one(&self.pool)
                    .await?;
                Ok(WebhookGauges {
                    failing,
                    failed,
                    oldest_pending_ms,
                })
            }
        }
    };
}

impl_webhooks!(SqliteStore, begin = "BEGIN IMMEDIATE");
impl_webhooks!(PgStore, begin = "BEGIN");
