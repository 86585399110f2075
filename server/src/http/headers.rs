//! Security headers on every response.
//!
//! The Content-Security-Policy allows this app and nothing else: scripts,
//! styles, images and connections from this origin only; the WASM module
//! may be compiled (`'wasm-unsafe-eval'`, which allows WebAssembly and not
//! JavaScript `eval`); the page's inline scripts (the hydration bootstrap
//! and the resources streamed with the page) carry the response's nonce
//! ([`page_csp`], set by `http::pages::with_nonce`); no plugins, no `<base>`
//! rewriting, forms post only here, and no site may frame it.

use axum::extract::Request;
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

/// What every directive but `script-src` says.
const COMMON: &str = "default-src 'self'; style-src 'self'; img-src 'self' data:; \
     connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; \
     form-action 'self'; frame-ancestors 'none'";

/// The policy for a rendered page with `nonce` on its inline scripts.
pub fn page_csp(nonce: &str) -> String {
    format!("{COMMON}; script-src 'self' 'wasm-unsafe-eval' 'nonce-{nonce}'")
}

/// The policy for everything else (JSON, assets, the sign-in pages): no
/// inline script at all.
fn default_csp() -> String {
    format!("{COMMON}; script-src 'self' 'wasm-unsafe-eval'")
}

pub async fn security_headers(req: Request, next: Next) -> Response {
    let mut response = next.run(req).await;
    let headers = response.headers_mut();
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        if let Ok(v) = HeaderValue::from_str(&default_csp()) {
            headers.insert(header::CONTENT_SECURITY_POLICY, v);
        }
    }
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    // Sign-in links carry their code in the query: never pass the address on.
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    // For browsers without CSP frame-ancestors.
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    response
}
