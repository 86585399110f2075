//! The SQL both engines share. `impl_store!` expands to the [`Store`]
//! implementation for one engine's store type; the body is written once so
//! the two engines can never drift apart. SQL uses `$n` placeholders in
//! ascending order, which SQLite and PostgreSQL both accept.
//!
//! [`Store`]: super::Store

macro_rules! impl_store {
    ($store:ty, $engine:expr) => {
        #[async_trait::async_trait]
        impl $crate::store::Store for $store {
            fn engine(&self) -> $crate::store::Engine {
                $engine
            }

            async fn ping(&self) -> $crate::store::Result<()> {
                sqlx::query("SELECT 1").execute(&self.pool).await?;
                Ok(())
            }

            async fn list_profiles(&self) -> $crate::store::Result<Vec<$crate::store::ProfileRow>> {
                let rows = sqlx::query_as::<_, (String, String, i64, String, i64, i64)>(
                    "SELECT id, name, revision, document, created_at, updated_at
                     FROM profiles ORDER BY created_at, id",
                )
                .fetch_all(&self.pool)
                .await?;
                Ok(rows.into_iter().map($crate::store::sql::profile_row).collect())
            }

            async fn get_profile(
                &self,
                id: &str,
            ) -> $crate::store::Result<Option<$crate::store::ProfileRow>> {
                let row = sqlx::query_as::<_, (String, String, i64, String, i64, i64)>(
                    "SELECT id, name, revision, document, created_at, updated_at
                     FROM profiles WHERE id = $1",
                )
                .bind(id)
                .fetch_optional(&self.pool)
                .await?;
                Ok(row.map($crate::store::sql::profile_row))
            }

            async fn insert_profile(
                &self,
                row: &$crate::store::ProfileRow,
            ) -> $crate::store::Result<$crate::store::ProfileRow> {
                sqlx::query(
                    "INSERT INTO profiles (id, name, revision, document, created_at, updated_at)
                     VALUES ($1, $2, 1, $3, $4, $5)",
                )
                .bind(&row.id)
                .bind(&row.name)
                .bind(&row.document)
                .bind(row.created_at_ms)
                .bind(row.updated_at_ms)
                .execute(&self.pool)
                .await?;
                Ok($crate::store::ProfileRow {
                    revision: 1,
                    ..row.clone()
                })
            }

            async fn update_profile(
                &self,
                id: &str,
                expected_revision: i64,
                name: &str,
                document: &str,
                now_ms: i64,
            ) -> $crate::store::Result<$crate::store::ProfileRow> {
                let mut tx = self.pool.begin().await?;
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
                .map($crate::store::sql::profile_row);
                match (updated, row) {
                    (1, Some(row)) => {
                        tx.commit().await?;
                        Ok(row)
                    }
                    (_, Some(row)) => Err($crate::store::StoreError::StaleRevision {
                        current: row.revision,
                    }),
                    (_, None) => Err($crate::store::StoreError::NotFound),
                }
            }

            async fn normalise_profile_document(
                &self,
                id: &str,
                revision: i64,
                document: &str,
            ) -> $crate::store::Result<()> {
                sqlx::query("UPDATE profiles SET document = $1 WHERE id = $2 AND revision = $3")
                    .bind(document)
                    .bind(id)
                    .bind(revision)
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }

            async fn delete_profile(
                &self,
                id: &str,
                expected_revision: Option<i64>,
            ) -> $crate::store::Result<()> {
                let mut tx = self.pool.begin().await?;
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
                tx.commit().await?;
                Ok(())
            }

            async fn get_setting(&self, key: &str) -> $crate::store::Result<Option<String>> {
                Ok(sqlx::query_scalar("SELECT value FROM settings WHERE key = $1")
                    .bind(key)
                    .fetch_optional(&self.pool)
                    .await?)
            }

            async fn set_setting_once(&self, key: &str, value: &str) -> $crate::store::Result<bool> {
                let inserted = sqlx::query(
                    "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
                )
                .bind(key)
                .bind(value)
                .execute(&self.pool)
                .await?
                .rows_affected();
                Ok(inserted == 1)
            }
        }
    };
}

pub(crate) use impl_store;

pub(crate) fn profile_row(
    (id, name, revision, document, created_at_ms, updated_at_ms): (
        String,
        String,
        i64,
        String,
        i64,
        i64,
    ),
) -> super::ProfileRow {
    super::ProfileRow {
        id,
        name,
        revision,
        document,
        created_at_ms,
        updated_at_ms,
    }
}
