//! Profiles (a revision fences every change) and the settings table (keys
//! set once, such as the example profile seeded on first start): the rows
//! the profile service keeps. Their own module, as each table group of the
//! shared SQL is (see [`super`]).

pub(crate) fn profile_row(
    (id, name, revision, document, created_at_ms, updated_at_ms): (
        String,
        String,
        i64,
        String,
        i64,
        i64,
    ),
) -> crate::store::ProfileRow {
    crate::store::ProfileRow {
        id,
        name,
        revision,
        document,
        created_at_ms,
        updated_at_ms,
    }
}

/// Expands, in an engine's module, to `mod profiles`: the functions
/// `impl_store!` implements these [`Store`](crate::store::Store) methods
/// with, over `$store`.
macro_rules! profiles_sql {
    ($store:ty, $db:ty, begin = $begin:expr) => {
        /// Profiles and settings (`store::sql::profiles`).
        mod profiles {
            use super::*;

            pub(super) async fn list_profiles(store: &$store) -> $crate::store::Result<Vec<$crate::store::ProfileRow>> {
                let rows = sqlx::query_as::<_, (String, String, i64, String, i64, i64)>(
                    "SELECT id, name, revision, document, created_at, updated_at
                     FROM profiles ORDER BY created_at, id",
                )
                .fetch_all(&store.pool)
                .await?;
                Ok(rows.into_iter().map($crate::store::sql::profiles::profile_row).collect())
            }

            pub(super) async fn get_profile(
                store: &$store,
                id: &str,
            ) -> $crate::store::Result<Option<$crate::store::ProfileRow>> {
                let row = sqlx::query_as::<_, (String, String, i64, String, i64, i64)>(
                    "SELECT id, name, revision, document, created_at, updated_at
                     FROM profiles WHERE id = $1",
                )
                .bind(id)
                .fetch_optional(&store.pool)
                .await?;
                Ok(row.map($crate::store::sql::profiles::profile_row))
            }

            pub(super) async fn insert_profile(
                store: &$store,
                row: &$crate::store::ProfileRow,
                actor: &str,
            ) -> $crate::store::Result<$crate::store::ProfileRow> {
                store.health()?;
                let _writer = store.writer().await;
                let mut tx = store.pool.begin_with($begin).await?;
                sqlx::query(
                    "INSERT INTO profiles (id, name, revision, document, created_at, updated_at)
                     VALUES ($1, $2, 1, $3, $4, $5)",
                )
                .bind(&row.id)
                .bind(&row.name)
                .bind(&row.document)
                .bind(row.created_at_ms)
                .bind(row.updated_at_ms)
                .execute(&mut *tx)
                .await?;
                let row = $crate::store::ProfileRow {
                    revision: 1,
                    ..row.clone()
                };
                kept(&mut tx, &row, actor, "profile.created").await?;
                tx.commit().await?;
                Ok(row)
            }

            /// Keeps `row`'s revision and audits `action` by `actor`, in
            /// the profile change's own transaction.
            async fn kept(
                tx: &mut sqlx::Transaction<'_, $db>,
                row: &$crate::store::ProfileRow,
                actor: &str,
                action: &str,
            ) -> $crate::store::Result<()> {
                sqlx::query($crate::store::audit::INSERT_REVISION)
                    .bind(&row.id)
                    .bind(row.revision)
                    .bind(&row.name)
                    .bind(&row.document)
                    .bind(actor)
                    .bind(row.updated_at_ms)
                    .execute(&mut **tx)
                    .await?;
                sqlx::query($crate::store::audit::INSERT_AUDIT)
                    .bind(row.updated_at_ms)
                    .bind(actor)
                    .bind(action)
                    .bind(&row.id)
                    .bind(serde_json::json!({ "revision": row.revision, "name": row.name }).to_string())
                    .execute(&mut **tx)
                    .await?;
                Ok(())
            }

            pub(super) async fn update_profile(
                store: &$store,
                id: &str,
                expected_revision: i64,
                name: &str,
                document: &str,
                now_ms: i64,
                actor: &str,
            ) -> $crate::store::Result<$crate::store::ProfileRow> {
                store.health()?;
                let _writer = store.writer().await;
                let mut tx = store.pool.begin_with($begin).await?;
                let updated = sqlx::query(
                    "UPDATE profiles SET name = $1, document = $2, updated_at = $3,
                            revision = revision + 1
                     WHERE id = $4 AND revision = $5",
                )
                .bind(name)
                .bind(document)
                .bind(now_ms)
                .bind(id)
                .bind(expected_revision)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                let row = sqlx::query_as::<_, (String, String, i64, String, i64, i64)>(
                    "SELECT id, name, revision, document, created_at, updated_at
                     FROM profiles WHERE id = $1",
                )
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?
                .map($crate::store::sql::profiles::profile_row);
                match (updated, row) {
                    (1, Some(row)) => {
                        kept(&mut tx, &row, actor, "profile.updated").await?;
                        tx.commit().await?;
                        Ok(row)
                    }
                    (_, Some(row)) => Err($crate::store::StoreError::StaleRevision {
                        current: row.revision,
                    }),
                    (_, None) => Err($crate::store::StoreError::NotFound),
                }
            }

            pub(super) async fn normalise_profile_document(
                store: &$store,
                id: &str,
                revision: i64,
                document: &str,
            ) -> $crate::store::Result<()> {
                store.health()?;
                sqlx::query("UPDATE profiles SET document = $1 WHERE id = $2 AND revision = $3")
                    .bind(document)
                    .bind(id)
                    .bind(revision)
                    .execute(&store.pool)
                    .await?;
                Ok(())
            }

            pub(super) async fn delete_profile(
                store: &$store,
                id: &str,
                expected_revision: Option<i64>,
                actor: &str,
                now_ms: i64,
            ) -> $crate::store::Result<()> {
                store.health()?;
                let _writer = store.writer().await;
                let mut tx = store.pool.begin_with($begin).await?;
                let current: Option<i64> =
                    sqlx::query_scalar("SELECT revision FROM profiles WHERE id = $1")
                        .bind(id)
                        .fetch_optional(&mut *tx)
                        .await?;
                match (current, expected_revision) {
                    (None, _) => return Err($crate::store::StoreError::NotFound),
                    (Some(current), Some(expected)) if current != expected => {
                        return Err($crate::store::StoreError::StaleRevision { current })
                    }
                    _ => {}
                }
                sqlx::query("DELETE FROM profiles WHERE id = $1")
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query($crate::store::audit::INSERT_AUDIT)
                    .bind(now_ms)
                    .bind(actor)
                    .bind("profile.deleted")
                    .bind(id)
                    .bind(serde_json::json!({ "revision": current }).to_string())
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(())
            }

            pub(super) async fn get_setting(store: &$store, key: &str) -> $crate::store::Result<Option<String>> {
                Ok(sqlx::query_scalar("SELECT value FROM settings WHERE key = $1")
                    .bind(key)
                    .fetch_optional(&store.pool)
                    .await?)
            }

            pub(super) async fn set_setting_once(store: &$store, key: &str, value: &str) -> $crate::store::Result<bool> {
                store.health()?;
                let inserted = sqlx::query(
                    "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
                )
                .bind(key)
                .bind(value)
                .execute(&store.pool)
                .await?
                .rows_affected();
                Ok(inserted == 1)
            }
        }
    };
}

pub(crate) use profiles_sql;
