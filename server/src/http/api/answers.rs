//! The answers every guarded endpoint may give whatever its handler does,
//! added to each operation's document from its [`Rule`] and method, so the
//! document cannot forget one (API fuzzing checks every status against
//! it). A handler's own description of a status wins.

use crate::auth::Permission;
use crate::auth::Rule;
use axum::http::Method;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::Operation;
use utoipa::openapi::schema::ObjectBuilder;
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{Content, Ref, RefOr, Response, ResponseBuilder, Type};

/// Adds to `op` the statuses the guard, the extractors and the store may
/// answer for an endpoint under `rule`.
pub fn add_common(rule: Rule, method: &Method, op: &mut Operation) {
    let mutating = super::super::guard::mutating(method);
    let mut add = |status: &str, response: Response| {
        op.responses
            .responses
            .entry(status.to_string())
            .or_insert(RefOr::T(response));
    };
    // JSON bodies are read by `JsonBody`; a form (the sign-in page's)
    // answers with its own page.
    let json_body = op
        .request_body
        .as_ref()
        .is_some_and(|body| body.content.contains_key("application/json"));
    if json_body {
        add("400", error("The body is not JSON (or is empty)."));
        add("413", error("The body is larger than `--max-body-bytes`."));
        add(
            "422",
            error("The body is JSON of the wrong shape; `errors` names each field."),
        );
    }
    let has_query = op.parameters.as_ref().is_some_and(|ps| {
        ps.iter()
            .any(|p| p.parameter_in == utoipa::openapi::path::ParameterIn::Query)
    });
    if has_query {
        add("400", error("A query parameter is malformed."));
    }
    let has_path_id = op.parameters.as_ref().is_some_and(|ps| {
        ps.iter()
            .any(|p| p.parameter_in == utoipa::openapi::path::ParameterIn::Path)
    });
    if has_path_id {
        add("404", error("Nothing has this id."));
    }
    if rule == Rule::Public {
        // No credential needed: an empty requirement overrides the
        // document's default `bearer`.
        op.security = Some(vec![SecurityRequirement::default()]);
        return;
    }
    add(
        "401",
        ResponseBuilder::from(error(
            "No valid credential: no token or session, or one that is unknown, revoked or expired.",
        ))
        .header(
            "www-authenticate",
            HeaderBuilder::new()
                .schema(ObjectBuilder::new().schema_type(Type::String))
                .description(Some("`Bearer`"))
                .build(),
        )
        .build(),
    );
    // A signed-in browser's write without its CSRF token is refused even
    // when the rule needs no permission.
    if rule != Rule::SignedIn || mutating {
        add(
            "403",
            error("The credential lacks the permission, or a browser write lacks its CSRF token."),
        );
    }
    if rule == Rule::Need(Permission::EvidenceSubmit) {
        add(
            "429",
            ResponseBuilder::from(error(
                "Too many evidence reports from this credential; nothing was recorded.",
            ))
            .header(
                "retry-after",
                HeaderBuilder::new()
                    .schema(ObjectBuilder::new().schema_type(Type::Integer))
                    .description(Some("Seconds until a report is accepted again"))
                    .build(),
            )
            .build(),
        );
    }
    // Credentials are looked up in the database.
    add(
        "503",
        ResponseBuilder::from(error(
            "The database cannot be read or written; nothing changed. Send the same request again later.",
        ))
        .header(
            "retry-after",
            HeaderBuilder::new()
                .schema(ObjectBuilder::new().schema_type(Type::Integer))
                .description(Some("Seconds after which to try again"))
                .build(),
        )
        .build(),
    );
}

/// An [`domain::error::ApiError`] body.
fn error(description: &str) -> Response {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            Content::new(Some(Ref::from_schema_name("ApiError"))),
        )
        .build()
}
