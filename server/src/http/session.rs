//! Browser sign-in: the one-time link's page posts its code, which opens a session (an HttpOnly,
//! SameSite=Strict cookie, Secure behind HTTPS) plus the CSRF token the page
//! sends with every write; `/api/v1/session` says who is signed in, and
//! signing out ends the session.

use super::error::{HttpError, HttpResult};
use super::extract::Query;
use super::guard::Caller;
use super::AppState;
use crate::auth::access::{CSRF_COOKIE, SESSION_COOKIE};
use crate::auth::{secret, Principal, Via};
use axum::extract::rejection::FormRejection;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Form, Json};
use domain::error::{ApiError, Viewer};
use serde::Deserialize;

/// What the UI sees of a principal.
pub fn viewer_of(p: &Principal) -> Viewer {
    Viewer {
        name: p.name.clone(),
        permissions: p.permissions.list(),
        session: matches!(p.via, Via::Session { .. }),
    }
}

/// Who is asking: the signed-in person or the token.
#[utoipa::path(get, path = "/session", tag = "access", operation_id = "get_session",
    responses((status = 200, description = "The signed-in person or the token: name and permissions", body = Viewer)))]
pub async fn get(Caller(caller): Caller) -> Json<Viewer> {
    Json(viewer_of(&caller))
}

/// Signs this browser out: the session ends at once and its cookies are
/// cleared.
#[utoipa::path(post, path = "/session/sign-out", tag = "access", operation_id = "sign_out",
    responses((status = 204, description = "Signed out: the session ended and its cookies are cleared")))]
pub async fn sign_out(State(s): State<AppState>, headers: HeaderMap) -> HttpResult<Response> {
    s.access.sign_out(&headers).await?;
    let mut response = StatusCode::NO_CONTENT.into_response();
    let secure = is_https(&headers);
    for name in [SESSION_COOKIE, CSRF_COOKIE] {
        append_cookie(
            &mut response,
            &format!("{name}=; Max-Age=0"),
            name == SESSION_COOKIE,
            secure,
        );
    }
    Ok(response)
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SignInQuery {
    /// The one-time code of a sign-in link.
    pub code: Option<String>,
}

/// `GET /sign-in?code=…`: a page with one button that signs in. Opening
/// the link uses nothing up: link scanners, previews and prefetchers open
/// links with GET or HEAD, and a link they burnt would not work for the
/// person it was for. A page for people, not an API: its answers are HTML.
#[utoipa::path(get, path = "/sign-in", tag = "access", operation_id = "sign_in_page", params(SignInQuery),
    responses(
        (status = 200, description = "A page whose button posts the code to `POST /sign-in`", body = String, content_type = "text/html"),
        (status = 400, description = "No code (a page), or a malformed query string (an error body)",
            content((String = "text/html"), (ApiError = "application/json")))))]
pub async fn sign_in_page(Query(q): Query<SignInQuery>) -> Response {
    let Some(code) = q.code.filter(|c| !c.is_empty()) else {
        return page(
            StatusCode::BAD_REQUEST,
            "This address needs the code from a sign-in link.",
        );
    };
    // The code goes back in a form, never in a URL the next page could
    // leak; escaped, since it came from the address.
    let body = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Sign in · Provider Error Recovery</title></head>\
         <body><main><h1>Sign in to Provider Error Recovery</h1>\
         <p>This link signs you in once, in this browser.</p>\
         <form method=\"post\" action=\"/sign-in\">\
         <input type=\"hidden\" name=\"code\" value=\"{}\">\
         <button type=\"submit\">Sign in</button></form></main></body></html>",
        html_escape::encode_double_quoted_attribute(&code)
    );
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body,
    )
        .into_response()
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct SignInForm {
    /// The one-time code of a sign-in link.
    pub code: String,
}

/// `POST /sign-in` (the sign-in page's button, `code=…` as a form): uses
/// up the link, opens a session and goes to the profiles. Refused from
/// another site (`Sec-Fetch-Site`, `Origin`): a page elsewhere could
/// otherwise sign a visitor in as its own author (login CSRF).
#[utoipa::path(post, path = "/sign-in", tag = "access", operation_id = "sign_in",
    request_body(content = SignInForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 303, description = "Signed in: the session and CSRF cookies are set; goes to /profiles",
            headers(("location" = String), ("set-cookie" = String))),
        (status = 400, description = "No code", body = String, content_type = "text/html"),
        (status = 401, description = "The link was already used or has expired", body = String, content_type = "text/html"),
        (status = 403, description = "Posted from another site", body = String, content_type = "text/html"),
        (status = 503, description = "The database cannot be read or written; nothing changed", body = ApiError,
            headers(("retry-after" = u64, description = "Seconds after which to try again")))))]
pub async fn sign_in(
    State(s): State<AppState>,
    headers: HeaderMap,
    form: Result<Form<SignInForm>, FormRejection>,
) -> Response {
    if super::guard::cross_site(&headers) {
        return page(
            StatusCode::FORBIDDEN,
            "Sign-in links work only from this site's own sign-in page; open the link itself.",
        );
    }
    let Some(code) = form.ok().map(|Form(f)| f.code).filter(|c| !c.is_empty()) else {
        return page(
            StatusCode::BAD_REQUEST,
            "Signing in needs the code from a sign-in link; open the link itself.",
        );
    };
    let session = match s.access.redeem(&code).await {
        Ok(Some(session)) => session,
        Ok(None) => {
            return page(
                StatusCode::UNAUTHORIZED,
                "This sign-in link was already used or has expired. Ask an administrator for a new one \
                 (kandev-recovery user add NAME --permissions …).",
            )
        }
        Err(e) => return HttpError::from(e).into_response(),
    };
    tracing::info!(user = %session.user.name, "signed in");
    let mut response = (
        StatusCode::SEE_OTHER,
        [(header::LOCATION, HeaderValue::from_static("/profiles"))],
    )
        .into_response();
    let secure = is_https(&headers);
    let age = session.max_age_seconds;
    append_cookie(
        &mut response,
        &format!("{SESSION_COOKIE}={}; Max-Age={age}", session.secret),
        true,
        secure,
    );
    // Readable by this site's pages (not HttpOnly): the app sends it back
    // as `x-csrf-token`; another site can neither read it nor send it.
    append_cookie(
        &mut response,
        &format!(
            "{CSRF_COOKIE}={}; Max-Age={age}",
            secret::csrf_of(&session.secret)
        ),
        false,
        secure,
    );
    response
}

/// Behind a TLS-terminating proxy the request says so; the cookie is then
/// only ever sent over HTTPS.
fn is_https(headers: &HeaderMap) -> bool {
    headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("https"))
}

fn append_cookie(response: &mut Response, cookie: &str, http_only: bool, secure: bool) {
    let value = format!(
        "{cookie}; Path=/; SameSite=Strict{}{}",
        if http_only { "; HttpOnly" } else { "" },
        if secure { "; Secure" } else { "" }
    );
    if let Ok(v) = HeaderValue::from_str(&value) {
        response.headers_mut().append(header::SET_COOKIE, v);
    }
}

fn page(status: StatusCode, message: &str) -> Response {
    let body = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Sign in · Provider Error Recovery</title></head>\
         <body><main><h1>Sign in</h1><p>{message}</p></main></body></html>"
    );
    (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body,
    )
        .into_response()
}
