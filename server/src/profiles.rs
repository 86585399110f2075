//! Dynamic profiles: validation at write time, legacy normalisation at first
//! load, optimistic concurrency. HTTP handlers and the page renderer call
//! this; it calls the pure validator in `domain::profile` and the store.

use crate::clock::{from_ms, SharedClock};
use crate::store::{DynStore, ProfileRow, StoreError};
use domain::audit::Actor;
use domain::ids::ProfileId;
use domain::policy::{ErrorClass, FieldError};
use domain::profile::{
    read_profile, Candidate, ConfigurationError, Intent, Prefer, Profile, ProfileDraft,
    ValidationReport,
};
use serde_json::{json, Value};

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("the profile is invalid")]
    Invalid(Vec<FieldError>),
    #[error("no profile with that id")]
    NotFound,
    /// Someone saved first; `current` is what is stored now.
    #[error("the profile was changed by someone else")]
    Stale { current: Box<Profile> },
    #[error("the profile has a configuration error: {0}")]
    Misconfigured(String),
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for ProfileError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound => ProfileError::NotFound,
            other => ProfileError::Store(other),
        }
    }
}

pub type Result<T, E = ProfileError> = std::result::Result<T, E>;

/// Code → class lookup used when normalising legacy per-code rules.
pub type ClassOf = std::sync::Arc<dyn Fn(&str) -> Option<ErrorClass> + Send + Sync>;

#[derive(Clone)]
pub struct Profiles {
    store: DynStore,
    clock: SharedClock,
    class_of: ClassOf,
}

fn new_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..12].to_string()
}

impl Profiles {
    pub fn new(store: DynStore, clock: SharedClock, class_of: ClassOf) -> Self {
        Profiles {
            store,
            clock,
            class_of,
        }
    }

    /// Validates a create/update body without storing anything.
    pub fn check(&self, body: &Value, intent: Intent) -> Result<ProfileDraft> {
        read_profile(body, intent, &*self.class_of, &mut new_id).map_err(ProfileError::Invalid)
    }

    /// The `validate` dry run: the normalised document and its schedule.
    pub fn validate(&self, body: &Value) -> Result<ValidationReport> {
        // A dry run accepts a body with or without a revision.
        let intent = if body.get("revision").is_some() {
            Intent::Update
        } else {
            Intent::Create
        };
        Ok(ValidationReport::of(&self.check(body, intent)?))
    }

    pub async fn list(&self) -> Result<Vec<Profile>> {
        let rows = self.store.list_profiles().await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            out.push(self.load(row).await);
        }
        Ok(out)
    }

    pub async fn get(&self, id: &str) -> Result<Profile> {
        let row = self
            .store
            .get_profile(id)
            .await?
            .ok_or(ProfileError::NotFound)?;
        Ok(self.load(row).await)
    }

    /// The profile a row read elsewhere holds (see
    /// `Store::get_route_for_decision`), as [`Profiles::get`] answers it.
    pub async fn of_row(&self, row: ProfileRow) -> Profile {
        self.load(row).await
    }

    /// A profile that may authorise work: loaded and free of configuration
    /// errors.
    pub async fn get_usable(&self, id: &str) -> Result<Profile> {
        let p = self.get(id).await?;
        match &p.configuration_error {
            Some(e) => Err(ProfileError::Misconfigured(e.message.clone())),
            None => Ok(p),
        }
    }

    pub async fn create(&self, body: &Value) -> Result<Profile> {
        let draft = self.check(body, Intent::Create)?;
        let now = self.clock.now_ms();
        let row = ProfileRow {
            id: new_id(),
            name: draft.name,
            revision: 1,
            document: document_json(draft.prefer, &draft.candidates),
            created_at_ms: now,
            updated_at_ms: now,
        };
        let row = self.store.insert_profile(&row, &acting()).await?;
        Ok(self.load(row).await)
    }

    pub async fn update(&self, id: &str, body: &Value) -> Result<Profile> {
        let draft = self.check(body, Intent::Update)?;
        if let Some(body_id) = body.get("id").and_then(Value::as_str) {
            if body_id != id {
                return Err(ProfileError::Invalid(vec![FieldError::new(
                    "id",
                    domain::policy::FieldErrorCode::InvalidValue,
                    format!("the body is for profile `{body_id}`, not `{id}`"),
                )]));
            }
        }
        let expected = draft.revision.unwrap_or_default();
        let document = document_json(draft.prefer, &draft.candidates);
        match self
            .store
            .update_profile(
                id,
                expected,
                &draft.name,
                &document,
                self.clock.now_ms(),
                &acting(),
            )
            .await
        {
            Ok(row) => Ok(self.load(row).await),
            Err(StoreError::StaleRevision { .. }) => Err(ProfileError::Stale {
                current: Box::new(self.get(id).await?),
            }),
            Err(e) => Err(e.into()),
        }
    }

    pub async fn delete(&self, id: &str, expected_revision: Option<i64>) -> Result<()> {
        let now = self.clock.now_ms();
        match self
            .store
            .delete_profile(id, expected_revision, &acting(), now)
            .await
        {
            Ok(()) => Ok(()),
            Err(StoreError::StaleRevision { .. }) => Err(ProfileError::Stale {
                current: Box::new(self.get(id).await?),
            }),
            Err(e) => Err(e.into()),
        }
    }

    /// Turns a row into a profile. A document holding legacy policies is
    /// normalised and written back once; one that cannot be normalised loads
    /// with a configuration error and no candidates, so it authorises no work
    /// while its stored text stays untouched for repair.
    async fn load(&self, row: ProfileRow) -> Profile {
        let mut profile = Profile {
            id: ProfileId(row.id.clone()),
            name: row.name.clone(),
            revision: row.revision,
            prefer: Prefer::Stay,
            candidates: Vec::new(),
            configuration_error: None,
            created_at: from_ms(row.created_at_ms),
            updated_at: from_ms(row.updated_at_ms),
        };
        let stored: Value = match serde_json::from_str(&row.document) {
            Ok(v) => v,
            Err(e) => {
                profile.configuration_error = Some(ConfigurationError {
                    message: format!("the stored candidate list is not valid JSON ({e}); save the profile again to repair it"),
                    errors: Vec::new(),
                });
                return profile;
            }
        };
        // A profile stored before the preference existed is a bare list
        // of candidates: it keeps today's behaviour, `stay`, until edited.
        let body = match stored {
            Value::Object(mut o) => {
                json!({"name": row.name, "prefer": o.remove("prefer"),
                    "candidates": o.remove("candidates")})
            }
            list => json!({"name": row.name, "prefer": Prefer::Stay, "candidates": list}),
        };
        match read_profile(&body, Intent::Create, &*self.class_of, &mut new_id) {
            Ok(draft) => {
                let normalised = document_json(draft.prefer, &draft.candidates);
                if normalised != row.document {
                    // Losing this race (a concurrent edit) is harmless: the
                    // edit wrote a normalised document itself.
                    if let Err(e) = self
                        .store
                        .normalise_profile_document(&row.id, row.revision, &normalised)
                        .await
                    {
                        tracing::warn!(profile = %row.id, error = %e, "could not persist the normalised profile document");
                    }
                }
                profile.prefer = draft.prefer;
                profile.candidates = draft.candidates;
            }
            Err(errors) => {
                profile.configuration_error = Some(ConfigurationError {
                    message: "a stored candidate policy cannot be mapped to the version-1 policy document; edit the profile and save it to repair it".into(),
                    errors,
                });
            }
        }
        profile
    }

    /// Creates the example profile on the very first start, so a newcomer
    /// sees something real. Never again afterwards, even if it is deleted.
    pub async fn seed_example(&self) -> Result<Option<Profile>> {
        if self.store.get_setting("seeded_example").await?.is_some() {
            return Ok(None);
        }
        let profile = self.create(&example_profile()).await?;
        self.store
            .set_setting_once("seeded_example", profile.id.as_str())
            .await?;
        Ok(Some(profile))
    }
}

/// Who changes a profile, as stored: the request's actor; the server's own
/// (the example seeded on first start) is the timer's.
fn acting() -> String {
    crate::audit::actor_json(&crate::audit::current().unwrap_or_else(Actor::timer))
}

/// The stored document: the preference and the candidate list (profiles
/// stored before the preference are a bare list, read as `stay`).
fn document_json(prefer: Prefer, candidates: &[Candidate]) -> String {
    serde_json::to_string(&json!({"prefer": prefer, "candidates": candidates}))
        .expect("candidates always serialise")
}

/// The example dynamic profile seeded on first start.
pub fn example_profile() -> Value {
    json!({
        "name": "Example: Claude then Codex",
        "candidates": [
            {
                "label": "Claude Code (Sonnet)",
                "agent": "claude-code",
                "provider_id": "anthropic",
                "model_id": "claude-sonnet-4-5",
                "profile_ref": "claude-sonnet",
                "policy": {
                    "version": 1,
                    "transient": {
                        "retry": {"enabled": true, "max_retries": 3, "initial_interval_seconds": 5},
                        "wait_for_reset": {"enabled": false, "max_wait_seconds": 0},
                        "on_exhausted": "skip"
                    },
                    "hard": {
                        "retry": {"enabled": false, "max_retries": 0, "initial_interval_seconds": 0},
                        "wait_for_reset": {"enabled": true, "max_wait_seconds": 300},
                        "on_exhausted": "skip"
                    }
                }
            },
            {
                "label": "Codex (GPT-5)",
                "agent": "codex",
                "provider_id": "openai",
                "model_id": "gpt-5-codex",
                "profile_ref": "codex"
            }
        ]
    })
}
