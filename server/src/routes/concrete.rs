//! Concrete sessions: classification and policy decisions for a session
//! that is not a route (`POST /classify`, `POST /policies/evaluate`). The
//! same catalogue, clock and unknown log a route's failure uses; nothing
//! else is stored, and no route, schedule or circuit changes.

use super::error::{Result, RouteError};
use super::Routes;
use crate::recovery::concrete;
use classify::{classify_with, Classification, Evidence};
use domain::concrete::{EvaluateAnswer, EvaluateRequest};

impl Routes {
    /// Classifies one envelope. Unrecognised evidence is recorded in the
    /// unknown log (sanitised), as a route's failure would be.
    pub async fn classify(&self, body: &serde_json::Value) -> Result<Classification> {
        let evidence = Evidence::from_json_value(body).map_err(|e| {
            RouteError::Malformed(format!("The evidence envelope could not be read: {e}."))
        })?;
        Ok(self.classify_evidence(&evidence).await)
    }

    /// The decision the evaluator would take for a concrete session's
    /// failure under one candidate's policy.
    pub async fn evaluate(&self, body: &serde_json::Value) -> Result<EvaluateAnswer> {
        let request = EvaluateRequest::read(body).map_err(RouteError::Invalid)?;
        let classification = self.classify_evidence(&request.evidence).await;
        let (decision, cycle) = concrete::decide(
            &classification,
            &request.evidence,
            &request.policy,
            request.cycle.unwrap_or_default(),
            self.now(),
        );
        Ok(EvaluateAnswer {
            classification,
            decision,
            cycle,
        })
    }

    async fn classify_evidence(&self, evidence: &Evidence) -> Classification {
        // With its trace, as a route's failure report answers it.
        let classification = classify_with(&self.catalogue.current(), evidence, self.now(), true);
        // The log grows the catalogue; losing one sighting must not fail
        // the caller's recovery.
        if let Err(e) = self
            .unknown
            .record_sighting(&classification, Some(evidence), None)
            .await
        {
            tracing::warn!(error = %e, "recording unknown evidence failed");
        }
        classification
    }
}
