//! The HTTP shell around `crate::auth`: the guard every route in the route
//! list is wrapped in, and the extractor a handler reads its caller from.
//!
//! The whole router carries the [`Access`] service as a request extension
//! ([`router`](super::router) adds it); each route's guard checks the
//! request's credential against that route's [`Rule`] before the handler
//! (or its body extractor) runs. A route without the extension answers 500:
//! a router assembled without access control fails closed.

use super::error::HttpError;
use crate::auth::rules::{decide, Credential, Decision, Principal, Rule};
use crate::auth::{Access, Permission};
use crate::store::DecisionRows;
use axum::extract::{FromRequestParts, RawPathParams, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::MethodRouter;

/// `method_router` admitting only the requests `rule` allows (its 405
/// answer for other methods is left alone).
pub fn guarded<S: Clone + Send + Sync + 'static>(
    rule: Rule,
    method_router: MethodRouter<S>,
) -> MethodRouter<S> {
    method_router.route_layer(axum::middleware::from_fn_with_state(rule, guard))
}

async fn guard(State(rule): State<Rule>, req: Request, next: Next) -> Response {
    check(rule, req, next).await
}

/// [`guarded`], for a handler that decides on a failure of the route its
/// path's `{id}` names: with a bearer token, the guard reads that route
/// for the decision together with the token (one round trip on
/// PostgreSQL, where they were two) and hands it to the handler as a
/// [`DecisionRead`]. Whether the request is admitted is decided exactly
/// as by [`guarded`].
pub fn guarded_decision<S: Clone + Send + Sync + 'static>(
    rule: Rule,
    method_router: MethodRouter<S>,
) -> MethodRouter<S> {
    method_router.route_layer(axum::middleware::from_fn_with_state(rule, decision_guard))
}

async fn decision_guard(
    State(rule): State<Rule>,
    params: RawPathParams,
    req: Request,
    next: Next,
) -> Response {
    let id = params
        .iter()
        .find(|(name, _)| *name == "id")
        .map(|(_, value)| value.to_owned());
    admit_and_run(rule, id.as_deref(), req, next).await
}

/// The route a [`guarded_decision`] guard read with the request's token:
/// as [`crate::store::Store::get_route_for_decision`] answers it, read
/// after the request arrived and before its handler ran.
#[derive(Clone)]
pub struct DecisionRead(pub DecisionRows);

/// Whether a method changes something (and so, from a browser, needs the
/// CSRF token).
pub fn mutating(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Checks `rule`; on success the [`Principal`] is handed to the handler as
/// a request extension.
pub async fn check(rule: Rule, req: Request, next: Next) -> Response {
    admit_and_run(rule, None, req, next).await
}

/// [`check`]; with `decision_of`, the route of that id is read with a
/// bearer token and handed on as a [`DecisionRead`].
async fn admit_and_run(
    rule: Rule,
    decision_of: Option<&str>,
    mut req: Request,
    next: Next,
) -> Response {
    let access = req.extensions().get::<Access>().cloned();
    let verdict = match (&access, decision_of) {
        (Some(a), Some(id)) if rule != Rule::Public => {
            match a.resolve_for_decision(req.headers(), id).await {
                Ok((credential, read)) => {
                    verdict(rule, credential, req.method()).map(|p| (p, read))
                }
                Err(e) => Err(e.into()),
            }
        }
        _ => admit(rule, access.clone(), req.headers(), req.method())
            .await
            .map(|p| (p, None)),
    };
    match verdict {
        Ok((Some(principal), read)) => {
            // Evidence is rate-limited per credential, before anything is
            // recorded (a failure's route may already have been read with
            // its token).
            if rule == Rule::Need(Permission::EvidenceSubmit) {
                if let Some(Err(seconds)) = access.map(|a| a.take_evidence(&principal)) {
                    return HttpError::RateLimited("evidence reports", seconds).into_response();
                }
            }
            let actor = crate::audit::actor_of(&principal);
            req.extensions_mut().insert(principal);
            if let Some(read) = read {
                req.extensions_mut().insert(DecisionRead(read));
            }
            // What the handler commits is this principal's doing.
            no_store(crate::audit::acting(actor, next.run(req)).await)
        }
        Ok((None, _)) => next.run(req).await,
        Err(e) => e.into_response(),
    }
}

/// An answer made for one credential: no cache (the browser's, a shared
/// proxy's) may keep it, so it is neither shown to the next person at a
/// shared computer nor served to another client.
fn no_store(mut response: Response) -> Response {
    response.headers_mut().insert(
        axum::http::header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
    response
}

/// The verdict for a request under `rule`: the principal when there is one.
pub async fn admit(
    rule: Rule,
    access: Option<Access>,
    headers: &HeaderMap,
    method: &Method,
) -> Result<Option<Principal>, HttpError> {
    if rule == Rule::Public {
        return Ok(None);
    }
    let Some(access) = access else {
        return Err(HttpError::Internal(
            "the access layer is missing from this router".into(),
        ));
    };
    let credential = access.resolve(headers).await?;
    verdict(rule, credential, method)
}

/// What `rule` makes of `credential` for a request by `method`.
fn verdict(
    rule: Rule,
    credential: Credential,
    method: &Method,
) -> Result<Option<Principal>, HttpError> {
    match decide(rule, &credential, mutating(method)) {
        Decision::Allow => Ok(match credential {
            Credential::Valid(p) => Some(p),
            _ => None,
        }),
        Decision::Unauthenticated(m) => Err(HttpError::Unauthorized(m)),
        Decision::Forbidden(m) => Err(HttpError::Forbidden(m)),
    }
}

/// The caller the guard admitted. Only on routes whose rule is not
/// [`Rule::Public`].
pub struct Caller(pub Principal);

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Principal>()
            .cloned()
            .map(Caller)
            .ok_or_else(|| {
                HttpError::Unauthorized(
                    "Sign in, or send an API token as `Authorization: Bearer <token>`.".into(),
                )
            })
    }
}

/// Whether a request says it comes from another site: its
/// `Sec-Fetch-Site` (every current browser sends one) is `cross-site` or
/// `same-site`, or, without one, its `Origin` is not the address it was
/// sent to (`null` included). A request without either came from no
/// browser page (a script, curl): no site can have sent it.
pub fn cross_site(headers: &HeaderMap) -> bool {
    if let Some(site) = headers.get("sec-fetch-site") {
        return matches!(site.to_str(), Ok("cross-site" | "same-site"));
    }
    let Some(origin) = headers.get(axum::http::header::ORIGIN) else {
        return false;
    };
    let host = headers
        .get(axum::http::header::HOST)
        .and_then(|v| v.to_str().ok());
    let origin_host = origin
        .to_str()
        .ok()
        .and_then(|o| o.split_once("://"))
        .map(|(_, rest)| rest);
    match (origin_host, host) {
        (Some(o), Some(h)) => !o.eq_ignore_ascii_case(h),
        _ => true,
    }
}

/// Whether `host` (a `Host` header or an authority, port optional) names
/// this machine: `localhost` (or a name under it) or a loopback address.
pub fn is_local_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or_default()
    } else if host.matches(':').count() == 1 {
        host.split(':').next().unwrap_or_default()
    } else {
        host
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `serve --no-auth` lets every request in, so it keeps out what a
/// credential would have: requests addressed to another name (a site that
/// rebinds its DNS name to 127.0.0.1 could otherwise read and write
/// through the visitor's browser) and writes sent from another site's page
/// (a cross-site form posts `text/plain` without any preflight). Without
/// `--no-auth` this does nothing.
pub async fn local_only(State(no_auth): State<bool>, req: Request, next: Next) -> Response {
    if no_auth {
        let host = req
            .headers()
            .get(axum::http::header::HOST)
            .and_then(|v| v.to_str().ok())
            .or_else(|| req.uri().authority().map(|a| a.as_str()));
        if !host.is_some_and(is_local_host) {
            return HttpError::Forbidden(
                "Without authentication (--no-auth) this server answers only requests addressed \
                 to localhost or a loopback address."
                    .into(),
            )
            .into_response();
        }
        if mutating(req.method()) && cross_site(req.headers()) {
            return HttpError::Forbidden(
                "Without authentication (--no-auth) this server refuses changes sent from another site's page."
                    .into(),
            )
            .into_response();
        }
    }
    next.run(req).await
}

/// The pages' guard: like [`Rule::SignedIn`], but a visitor without a
/// valid credential gets a page saying how to sign in, not JSON.
pub async fn page_guard(mut req: Request, next: Next) -> Response {
    let access = req.extensions().get::<Access>().cloned();
    let verdict = admit(Rule::SignedIn, access, req.headers(), req.method()).await;
    match verdict {
        Ok(principal) => {
            let signed_in = principal.is_some();
            if let Some(p) = principal {
                req.extensions_mut().insert(p);
            }
            let response = next.run(req).await;
            if signed_in {
                no_store(response)
            } else {
                response
            }
        }
        Err(HttpError::Unauthorized(_)) => sign_in_page(),
        Err(e) => e.into_response(),
    }
}

/// What a visitor who is not signed in sees.
fn sign_in_page() -> Response {
    let body = r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · Provider Error Recovery</title><link rel="icon" type="image/svg+xml" href="/favicon.svg"></head>
<body><main><h1>Sign in to Provider Error Recovery</h1>
<p>Open the sign-in link the server printed when it first started, or ask an administrator for one
(<code>kandev-recovery user add NAME --permissions …</code>).</p></main></body></html>"#;
    (
        axum::http::StatusCode::UNAUTHORIZED,
        [(axum::http::header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::{cross_site, is_local_host};
    use axum::http::HeaderMap;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn cross_site_requests_are_told_by_fetch_metadata_or_origin() {
        assert!(!cross_site(&headers(&[])));
        assert!(!cross_site(&headers(&[("sec-fetch-site", "same-origin")])));
        assert!(!cross_site(&headers(&[("sec-fetch-site", "none")])));
        assert!(cross_site(&headers(&[("sec-fetch-site", "cross-site")])));
        assert!(cross_site(&headers(&[("sec-fetch-site", "same-site")])));
        let host = ("host", "127.0.0.1:3000");
        assert!(!cross_site(&headers(&[
            host,
            ("origin", "http://127.0.0.1:3000")
        ])));
        assert!(cross_site(&headers(&[
            host,
            ("origin", "https://evil.example")
        ])));
        assert!(cross_site(&headers(&[host, ("origin", "null")])));
    }

    #[test]
    fn only_loopback_names_are_local() {
        for local in [
            "localhost",
            "localhost:3000",
            "app.localhost:1",
            "127.0.0.1:3000",
            "127.1.2.3",
            "[::1]:3000",
            "::1",
            "LOCALHOST.",
        ] {
            assert!(is_local_host(local), "{local}");
        }
        for foreign in [
            "evil.example",
            "evil.example:3000",
            "10.0.0.1:3000",
            "localhost.evil.example",
            "[::2]:80",
            "",
        ] {
            assert!(!is_local_host(foreign), "{foreign}");
        }
    }
}
