//! The transaction a batch of route transitions is committed in through
//! sqlx, each member under its own savepoint ([`crate::store::group`]):
//! PostgreSQL's batches member by member, and SQLite's when it has no file
//! of its own (an in-memory database). The statements are
//! [`crate::store::transition::statements`], the one list both engines run.

/// Expands to `commit_batch` (and its helpers) on `$store`: `$begin`
/// opens the transaction, `$order_events` (when not empty) is run once
/// before the first member, `$notify` (when not empty) announces the
/// batch before the COMMIT.
macro_rules! batch_sql {
    ($store:ty, $db:ty, begin = $begin:expr, order_events = $order_events:expr, notify = $notify:expr) => {
        impl $store {
            /// Commits `commits` in one transaction, each under its own
            /// savepoint (see [`group`]): one answer per member, in order.
            ///
            /// [`group`]: $crate::store::group
            async fn commit_batch(
                pool: &sqlx::Pool<$db>,
                writer: Option<&tokio::sync::Mutex<()>>,
                commits: &[$crate::store::Commit],
            ) -> Vec<$crate::store::Result<i64>> {
                let _writer = match writer {
                    Some(w) => Some(w.lock().await),
                    None => None,
                };
                // Bounded like the set-based batch (see `group::BATCH_TIMEOUT`);
                // an abandoned transaction is rolled back when sqlx next
                // uses (or closes) its connection.
                let limit = $crate::store::group::BATCH_TIMEOUT;
                let batch = tokio::time::timeout(limit, Self::try_batch(pool, commits))
                    .await
                    .unwrap_or_else(|_| {
                        Err($crate::store::StoreError::Unavailable(format!(
                            "the database did not finish a batch within {} s; it may still commit",
                            limit.as_secs()
                        )))
                    });
                match batch {
                    Ok(answers) => answers,
                    Err(e) => {
                        tracing::warn!(error = %e, members = commits.len(), "a batch of route transitions failed");
                        $crate::store::group::failed_batch(commits.len(), &e)
                    }
                }
            }

            /// The batch's transaction; an error here fails every member.
            async fn try_batch(
                pool: &sqlx::Pool<$db>,
                commits: &[$crate::store::Commit],
            ) -> $crate::store::Result<Vec<$crate::store::Result<i64>>> {
                use $crate::store::group::{after_member, SAVEPOINT};
                let mut tx = pool.begin_with($begin).await?;
                // Taken once, outside every savepoint (rolling one back
                // would release it), and held to the COMMIT: the batch's
                // event ids commit in order.
                let order_events: &str = $order_events;
                if !order_events.is_empty() {
                    sqlx::query(order_events).execute(&mut *tx).await?;
                }
                // Statement hops are what a batch costs, so savepoints are
                // chained: a member that committed releases its savepoint
                // and opens the next one in one hop; one that failed rolls
                // back to its savepoint, which then stands as the next
                // member's (it marks the same state again). COMMIT takes
                // the last one along.
                let mut answers = Vec::with_capacity(commits.len());
                sqlx::Executor::execute(&mut *tx, sqlx::raw_sql(SAVEPOINT)).await?;
                for (i, c) in commits.iter().enumerate() {
                    let answer = Self::apply_commit(&mut *tx, c).await;
                    if let Some(sql) = after_member(answer.is_ok(), i + 1 == commits.len()) {
                        sqlx::Executor::execute(&mut *tx, sqlx::raw_sql(sql)).await?;
                    }
                    answers.push(answer);
                }
                let notify: &str = $notify;
                if !notify.is_empty() {
                    if let Some(a) = $crate::store::group::announcement(commits.iter().zip(&answers)) {
                        sqlx::query(notify).bind(a.payload()).execute(&mut *tx).await?;
                    }
                }
                tx.commit().await?;
                Ok(answers)
            }

            /// One member of a batch: everything [`Commit`] says (the
            /// statements [`transition::statements`] lists), inside the
            /// member's savepoint (the caller rolls back to it on an
            /// error); answers the new event's id.
            ///
            /// [`Commit`]: $crate::store::Commit
            /// [`transition::statements`]: $crate::store::transition::statements
            async fn apply_commit(
                conn: &mut <$db as sqlx::Database>::Connection,
                c: &$crate::store::Commit,
            ) -> $crate::store::Result<i64> {
                use $crate::store::transition::{statements, Check, Param, GENERATION};
                macro_rules! bound {
                    ($q:expr, $params:expr) => {{
                        let mut q = $q;
                        for p in $params {
                            q = match *p {
                                Param::Text(v) => q.bind(v),
                                Param::OptText(v) => q.bind(v),
                                Param::Int(v) => q.bind(v),
                                Param::OptInt(v) => q.bind(v),
                            };
                        }
                        q
                    }};
                }
                let route_id = c.route.as_ref().map(|r| r.id.as_str()).unwrap_or_default();
                for s in statements(c)? {
                    match s.check {
                        Check::EventId => {
                            return Ok(bound!(sqlx::query_scalar::<_, i64>(s.sql), &s.params)
                                .fetch_one(&mut *conn)
                                .await?);
                        }
                        Check::Any => {
                            bound!(sqlx::query(s.sql), &s.params).execute(&mut *conn).await?;
                        }
                        Check::One(miss) => {
                            let n = bound!(sqlx::query(s.sql), &s.params)
                                .execute(&mut *conn)
                                .await?
                                .rows_affected();
                            if n != 1 {
                                let current = match miss {
                                    $crate::store::transition::Miss::Route => {
                                        sqlx::query_scalar(GENERATION)
                                            .bind(route_id)
                                            .fetch_optional(&mut *conn)
                                            .await?
                                    }
                                    _ => None,
                                };
                                return Err(miss.error(current));
                            }
                        }
                    }
                }
                Err($crate::store::StoreError::Unavailable("a transition without an event".into()))
            }
        }
    };
}

pub(crate) use batch_sql;
