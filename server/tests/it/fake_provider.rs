//! A fake model provider on 127.0.0.1:0 for the real agent CLIs
//! (`agents_cli.rs`; server/tests/agents/README.md says what each CLI calls).
//!
//! One server speaks all three APIs, told apart by path:
//! - Anthropic Messages: `POST /v1/messages` (SSE when `"stream": true`, JSON
//!   otherwise), `POST /v1/messages/count_tokens`.
//! - OpenAI Responses as Codex uses it: `POST /v1/responses` (always SSE),
//!   `GET /v1/models`.
//! - Gemini: `POST /v1beta/models/{model}:streamGenerateContent?alt=sse`,
//!   `:generateContent`, `:countTokens`.
//!
//! MODEL calls take the next [`Reply`] from a scripted queue (an empty queue
//! answers `Text("PONG")`). Auxiliary calls are recognised and answered
//! without touching the queue: token counting, model lists, any GET/HEAD
//! (Claude Code's `HEAD /api/hello` connectivity check), and Gemini's
//! JSON-mode `generateContent` calls (its model router, next-speaker and loop
//! checks ask for `responseMimeType: application/json`).
//!
//! ```ignore
//! let fake = FakeProvider::start().await;
//! fake.push(Reply::anthropic_overloaded());
//! fake.push(Reply::text("PONG-42"));
//! // run the CLI with fake.base_url() …
//! assert_eq!(fake.model_calls(), 2);
//! ```
#![allow(dead_code)]

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, Method, StatusCode};
use axum::response::Response;
use futures::StreamExt;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the fake answers to one model call.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A complete answer with this text, in the API's shape (streamed when
    /// the request streams).
    Text(String),
    /// An HTTP error: status, extra headers, body as sent.
    Error {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Stream `text`, then fail: with `error_body` as an in-stream error event
    /// (Anthropic `event: error`, OpenAI `response.failed` carrying the body's
    /// `error` object, Gemini a `data: {"error":…}` chunk) and a close; with an
    /// empty `error_body`, the connection is cut after the text (no clean end
    /// of the chunked body). A non-streaming request gets a truncated body.
    TextThenError { text: String, error_body: String },
    /// A tool call (Anthropic `tool_use`, OpenAI `function_call`, Gemini
    /// `functionCall`) with these JSON arguments.
    ToolCall { name: String, args: Value },
    /// Never answer (the request stays open until the client gives up).
    Hang,
    /// Answer 200 with SSE headers, then send nothing (a stalled stream).
    Stall,
}

/// One request the fake received.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    /// Path and query, as sent.
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// Whether it took a reply from the script.
    pub model_call: bool,
    /// Since the fake started.
    pub at: Duration,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn json(&self) -> Option<Value> {
        serde_json::from_str(&self.body).ok()
    }
}

#[derive(Default)]
struct State {
    script: VecDeque<Reply>,
    requests: Vec<Recorded>,
}

/// The fake provider; the server stops when this is dropped.
pub struct FakeProvider {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeProvider {
    pub async fn start() -> Self {
        let state = Arc::new(Mutex::new(State::default()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().unwrap();
        let started = Instant::now();
        let st = state.clone();
        let app = axum::Router::new().fallback(move |req: Request| {
            let st = st.clone();
            async move { handle(st, started, req).await }
        });
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeProvider { addr, state, task }
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash or API prefix (Codex
    /// wants `{base_url}/v1`; the setups in agents_cli.rs add it).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn push(&self, r: Reply) {
        self.state.lock().unwrap().script.push_back(r);
    }

    /// How many requests took a reply from the script.
    pub fn model_calls(&self) -> usize {
        self.state
            .lock()
            .unwrap()
            .requests
            .iter()
            .filter(|r| r.model_call)
            .count()
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().requests.clone()
    }

    /// Replies pushed but not yet taken.
    pub fn pending(&self) -> usize {
        self.state.lock().unwrap().script.len()
    }
}

// ---- standard scenarios, in each provider's real error shape ----

impl Reply {
    pub fn text(s: &str) -> Reply {
        Reply::Text(s.to_string())
    }

    /// `body` is sent as written: serde_json would sort the keys, and the
    /// CLIs quote some bodies verbatim.
    fn json_error(status: u16, headers: &[(&str, String)], body: String) -> Reply {
        let mut h: Vec<(String, String)> = vec![("content-type".into(), "application/json".into())];
        h.extend(headers.iter().map(|(k, v)| (k.to_string(), v.clone())));
        Reply::Error {
            status,
            headers: h,
            body,
        }
    }

    /// Anthropic 529 `overloaded_error`.
    pub fn anthropic_overloaded() -> Reply {
        Reply::json_error(
            529,
            &[("request-id", "req_fake_overloaded".into())],
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
                .to_string(),
        )
    }

    /// Anthropic 429 `rate_limit_error` with `retry-after` (seconds) and the
    /// `anthropic-ratelimit-*-reset` headers at now + `reset_secs`.
    pub fn anthropic_rate_limit(reset_secs: u64) -> Reply {
        let reset = (chrono::Utc::now() + chrono::Duration::seconds(reset_secs as i64))
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        Reply::json_error(
            429,
            &[
                ("retry-after", reset_secs.to_string()),
                ("anthropic-ratelimit-requests-limit", "50".into()),
                ("anthropic-ratelimit-requests-remaining", "0".into()),
                ("anthropic-ratelimit-requests-reset", reset.clone()),
                ("anthropic-ratelimit-tokens-reset", reset.clone()),
                ("anthropic-ratelimit-input-tokens-reset", reset),
                ("request-id", "req_fake_rate_limit".into()),
            ],
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account's rate limit. Please try again later."}}"#.to_string(),
        )
    }

    /// What Anthropic answers a Claude subscription (Pro/Max) past its
    /// 5-hour window: 429 `rate_limit_error` with the
    /// `anthropic-ratelimit-unified-*` headers that say which window is
    /// exhausted (`representative-claim`) and when it resets (Unix seconds),
    /// extra usage (overage) refused too. Claude Code, signed in with a
    /// subscription token, reads these headers into its `rate_limit_event`
    /// and names the reset in its message; no header reaches its output.
    pub fn anthropic_usage_limit(reset_unix: i64) -> Reply {
        let reset = reset_unix.to_string();
        Reply::json_error(
            429,
            &[
                ("anthropic-ratelimit-unified-status", "rejected".into()),
                ("anthropic-ratelimit-unified-reset", reset.clone()),
                ("anthropic-ratelimit-unified-representative-claim", "five_hour".into()),
                ("anthropic-ratelimit-unified-5h-status", "rejected".into()),
                ("anthropic-ratelimit-unified-5h-reset", reset.clone()),
                ("anthropic-ratelimit-unified-5h-utilization", "1.0".into()),
                ("anthropic-ratelimit-unified-overage-status", "rejected".into()),
                ("anthropic-ratelimit-unified-overage-disabled-reason", "org_level_disabled".into()),
                ("retry-after", (reset_unix - chrono::Utc::now().timestamp()).max(0).to_string()),
                ("request-id", "req_fake_usage_limit".into()),
            ],
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account's rate limit. Please try again later."}}"#.to_string(),
        )
    }

    /// Anthropic 401 `authentication_error`.
    pub fn anthropic_auth() -> Reply {
        Reply::json_error(
            401,
            &[],
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#.to_string(),
        )
    }

    /// The in-stream error event body Anthropic sends when a stream fails.
    pub fn anthropic_stream_error_body() -> String {
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#.to_string()
    }

    /// OpenAI 503 "server is overloaded".
    pub fn openai_overloaded() -> Reply {
        Reply::json_error(
            503,
            &[],
            r#"{"error":{"message":"The server is overloaded or not ready yet.","type":"server_error","param":null,"code":null}}"#.to_string(),
        )
    }

    /// OpenAI 429 `rate_limit_exceeded` with `retry-after` and the
    /// `x-ratelimit-reset-*` headers.
    pub fn openai_rate_limit(reset_secs: u64) -> Reply {
        Reply::json_error(
            429,
            &[
                ("retry-after", reset_secs.to_string()),
                ("x-ratelimit-limit-requests", "500".into()),
                ("x-ratelimit-remaining-requests", "0".into()),
                ("x-ratelimit-reset-requests", format!("{reset_secs}s")),
                ("x-ratelimit-reset-tokens", format!("{reset_secs}s")),
            ],
            format!(
                r#"{{"error":{{"message":"Rate limit reached for gpt-5.5 in organization org-fake on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in {reset_secs}s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}}}"#
            ),
        )
    }

    /// OpenAI 429 `insufficient_quota` (the plan's usage limit; no reset).
    pub fn openai_quota() -> Reply {
        Reply::json_error(
            429,
            &[],
            r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#.to_string(),
        )
    }

    /// What the ChatGPT backend answers a Codex plan past its usage limit:
    /// 429 `usage_limit_reached` with the plan and the reset (Unix seconds)
    /// in the body, and the `x-codex-primary-*` (5-hour) /
    /// `x-codex-secondary-*` (weekly) window headers — the primary window
    /// exhausted, resetting at `reset_unix`; the weekly one at 40 %,
    /// resetting a day later. Codex prints only "… try again at 1:24 PM.";
    /// it keeps the windows in its session file.
    pub fn openai_usage_limit(reset_unix: i64) -> Reply {
        let in_secs = (reset_unix - chrono::Utc::now().timestamp()).max(0);
        Reply::json_error(
            429,
            &[
                ("x-codex-primary-used-percent", "100".into()),
                ("x-codex-primary-window-minutes", "300".into()),
                ("x-codex-primary-reset-after-seconds", in_secs.to_string()),
                ("x-codex-primary-reset-at", reset_unix.to_string()),
                ("x-codex-secondary-used-percent", "40".into()),
                ("x-codex-secondary-window-minutes", "10080".into()),
                (
                    "x-codex-secondary-reset-after-seconds",
                    (in_secs + 86_400).to_string(),
                ),
                (
                    "x-codex-secondary-reset-at",
                    (reset_unix + 86_400).to_string(),
                ),
            ],
            Reply::openai_usage_limit_body(reset_unix),
        )
    }

    /// The same refusal without the window headers: only the body.
    pub fn openai_usage_limit_body_only(reset_unix: i64) -> Reply {
        Reply::json_error(429, &[], Reply::openai_usage_limit_body(reset_unix))
    }

    fn openai_usage_limit_body(reset_unix: i64) -> String {
        let in_secs = (reset_unix - chrono::Utc::now().timestamp()).max(0);
        format!(
            r#"{{"error":{{"type":"usage_limit_reached","message":"The usage limit has been reached","plan_type":"plus","resets_at":{reset_unix},"resets_in_seconds":{in_secs}}}}}"#
        )
    }

    /// OpenAI 401 `invalid_api_key`.
    pub fn openai_auth() -> Reply {
        Reply::json_error(
            401,
            &[],
            r#"{"error":{"message":"Incorrect API key provided: sk-fake. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#.to_string(),
        )
    }

    /// The `error` object a `response.failed` event carries.
    pub fn openai_stream_error_body() -> String {
        r#"{"error":{"code":"server_error","message":"The server had an error processing your request."}}"#.to_string()
    }

    /// Gemini 503 `UNAVAILABLE` "model is overloaded".
    pub fn gemini_overloaded() -> Reply {
        Reply::json_error(
            503,
            &[],
            r#"{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}"#.to_string(),
        )
    }

    /// Gemini 429 `RESOURCE_EXHAUSTED` with a QuotaFailure and a RetryInfo of
    /// `retry_secs`. `per_day` picks the daily quota id (Gemini CLI then
    /// stops: "exhausted your daily quota"); otherwise a per-minute one (it
    /// retries after the RetryInfo delay).
    pub fn gemini_quota(retry_secs: u64, per_day: bool) -> Reply {
        let quota_id = if per_day {
            "GenerateRequestsPerDayPerProjectPerModel-FreeTier"
        } else {
            "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"
        };
        Reply::json_error(
            429,
            &[],
            [
                r#"{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.","status":"RESOURCE_EXHAUSTED","details":["#,
                r#"{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":""#,
                quota_id,
                r#"","quotaDimensions":{"location":"global","model":"gemini-2.5-flash"},"quotaValue":"50"}]},"#,
                r#"{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more about Gemini API quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]},"#,
                r#"{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":""#,
                &format!("{retry_secs}s"),
                r#""}]}}"#,
            ]
            .concat(),
        )
    }

    /// What the Gemini API really answers to a bad key: 400
    /// `INVALID_ARGUMENT` with reason `API_KEY_INVALID` (not a 401).
    pub fn gemini_auth() -> Reply {
        Reply::json_error(
            400,
            &[],
            r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}]}}"#.to_string(),
        )
    }

    /// Gemini 401 `UNAUTHENTICATED` (bad OAuth token / gateway).
    pub fn gemini_unauthenticated() -> Reply {
        Reply::json_error(
            401,
            &[],
            r#"{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}"#.to_string(),
        )
    }

    /// A Gemini in-stream error chunk.
    pub fn gemini_stream_error_body() -> String {
        r#"{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}"#.to_string()
    }

    /// A 500 with a body no catalogue knows.
    pub fn unknown_500() -> Reply {
        Reply::json_error(
            500,
            &[],
            r#"{"weird":"zork-17 flux capacitor"}"#.to_string(),
        )
    }

    /// 418 with a plain JSON message.
    pub fn teapot() -> Reply {
        Reply::json_error(418, &[], r#"{"message":"I'm a teapot"}"#.to_string())
    }
}

// ---- the server ----

#[derive(Clone, Copy, PartialEq, Debug)]
enum Api {
    Anthropic,
    OpenAi,
    Gemini,
}

async fn handle(st: Arc<Mutex<State>>, started: Instant, req: Request) -> Response {
    let method = req.method().clone();
    let path = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_default();
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let bytes = axum::body::to_bytes(req.into_body(), 64 << 20)
        .await
        .unwrap_or_default();
    let body = String::from_utf8_lossy(&bytes).into_owned();
    let parsed: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let p = path.split('?').next().unwrap_or("").to_string();

    let model_api = if method != Method::POST {
        None
    } else if p == "/v1/messages" {
        Some(Api::Anthropic)
    } else if p == "/v1/responses" {
        Some(Api::OpenAi)
    } else if p.contains(":streamGenerateContent")
        || (p.contains(":generateContent")
            && parsed
                .pointer("/generationConfig/responseMimeType")
                .and_then(Value::as_str)
                != Some("application/json"))
    {
        Some(Api::Gemini)
    } else {
        None
    };

    let reply = {
        let mut s = st.lock().unwrap();
        let reply = model_api.map(|_| s.script.pop_front().unwrap_or_else(|| Reply::text("PONG")));
        s.requests.push(Recorded {
            method: method.to_string(),
            path: path.clone(),
            headers,
            body,
            model_call: model_api.is_some(),
            at: started.elapsed(),
        });
        reply
    };

    let Some(api) = model_api else {
        return auxiliary(&method, &p, &parsed);
    };
    let reply = reply.unwrap();
    let stream = match api {
        Api::Anthropic => parsed
            .get("stream")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        Api::OpenAi => true,
        Api::Gemini => p.contains(":streamGenerateContent"),
    };
    let model = match api {
        Api::Gemini => p
            .rsplit('/')
            .next()
            .and_then(|s| s.split(':').next())
            .unwrap_or("gemini-2.5-flash")
            .to_string(),
        _ => parsed
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("fake-model")
            .to_string(),
    };
    answer(api, stream, &model, reply).await
}

/// Calls that do not consume the script.
fn auxiliary(method: &Method, p: &str, body: &Value) -> Response {
    if method == Method::HEAD
        || method == Method::GET && !p.starts_with("/v1/models") && !p.starts_with("/v1beta/models")
    {
        return json_response(200, &[], json!({}).to_string());
    }
    if p.ends_with("/count_tokens") {
        return json_response(200, &[], json!({"input_tokens": 10}).to_string());
    }
    if p.contains(":countTokens") {
        return json_response(200, &[], json!({"totalTokens": 10}).to_string());
    }
    if p.starts_with("/v1/models") {
        return json_response(
            200,
            &[],
            json!({"object":"list","data":[{"id":"gpt-5.5","object":"model","created":0,"owned_by":"fake"}]}).to_string(),
        );
    }
    if p.starts_with("/v1beta/models") && !p.contains(':') {
        return json_response(
            200,
            &[],
            json!({"models":[{"name":"models/gemini-2.5-flash"}]}).to_string(),
        );
    }
    if p.contains(":generateContent") {
        // Gemini CLI's JSON-mode helper calls (model router, next speaker,
        // loop detection): one object that satisfies each schema.
        let _ = body;
        let text = json!({
            "complexity_reasoning": "Simple request.", "complexity_score": 10,
            "reasoning": "The model answered; the user speaks next.", "next_speaker": "user",
            "model_choice": "flash"
        })
        .to_string();
        return json_response(
            200,
            &[],
            gemini_chunk(
                &[json!({"text": text})],
                Some("STOP"),
                "gemini-2.5-flash-lite",
            )
            .to_string(),
        );
    }
    json_response(404, &[], json!({"error":{"code":404,"message":format!("fake provider: no route {p}"),"status":"NOT_FOUND"}}).to_string())
}

fn json_response(status: u16, headers: &[(String, String)], body: String) -> Response {
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = r.headers_mut();
    h.insert("content-type", HeaderValue::from_static("application/json"));
    for (k, v) in headers {
        if let (Ok(k), Ok(v)) = (
            HeaderName::try_from(k.as_str()),
            HeaderValue::try_from(v.as_str()),
        ) {
            h.insert(k, v);
        }
    }
    r
}

/// A streamed body: the parts with a short pause between them, then a clean
/// end or (with `cut`) an error that makes hyper drop the connection.
fn streamed(status: u16, content_type: &'static str, parts: Vec<String>, cut: bool) -> Response {
    let items = parts
        .into_iter()
        .map(Ok::<String, std::io::Error>)
        .chain(cut.then(|| {
            Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "fake cut",
            ))
        }));
    let s = futures::stream::iter(items).then(|item| async move {
        tokio::time::sleep(Duration::from_millis(5)).await;
        item.map(Bytes::from)
    });
    let mut r = Response::new(Body::from_stream(s));
    *r.status_mut() = StatusCode::from_u16(status).unwrap();
    r.headers_mut()
        .insert("content-type", HeaderValue::from_static(content_type));
    r.headers_mut()
        .insert("cache-control", HeaderValue::from_static("no-cache"));
    r
}

fn sse(events: &[(Option<&str>, Value)]) -> Vec<String> {
    events
        .iter()
        .map(|(name, data)| match name {
            Some(n) => format!("event: {n}\ndata: {data}\n\n"),
            None => format!("data: {data}\n\n"),
        })
        .collect()
}

async fn answer(api: Api, stream: bool, model: &str, reply: Reply) -> Response {
    match reply {
        Reply::Hang => {
            std::future::pending::<()>().await;
            unreachable!()
        }
        Reply::Stall => {
            let s = futures::stream::pending::<Result<Bytes, std::io::Error>>();
            let mut r = Response::new(Body::from_stream(s));
            r.headers_mut().insert(
                "content-type",
                HeaderValue::from_static("text/event-stream"),
            );
            r
        }
        Reply::Error {
            status,
            headers,
            body,
        } => {
            let mut r = Response::new(Body::from(body));
            *r.status_mut() =
                StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            for (k, v) in headers {
                if let (Ok(k), Ok(v)) = (
                    HeaderName::try_from(k.as_str()),
                    HeaderValue::try_from(v.as_str()),
                ) {
                    r.headers_mut().insert(k, v);
                }
            }
            r
        }
        Reply::Text(text) => match api {
            Api::Anthropic if stream => streamed(
                200,
                "text/event-stream",
                sse(&anthropic_events(model, &text, true)),
                false,
            ),
            Api::Anthropic => json_response(
                200,
                &[],
                anthropic_message(model, &[json!({"type":"text","text":text})], "end_turn")
                    .to_string(),
            ),
            Api::OpenAi => streamed(
                200,
                "text/event-stream",
                sse(&openai_events(&text, None)),
                false,
            ),
            Api::Gemini if stream => streamed(
                200,
                "text/event-stream",
                sse(&[(
                    None,
                    gemini_chunk(&[json!({"text": text})], Some("STOP"), model),
                )]),
                false,
            ),
            Api::Gemini => json_response(
                200,
                &[],
                gemini_chunk(&[json!({"text": text})], Some("STOP"), model).to_string(),
            ),
        },
        Reply::TextThenError { text, error_body } => {
            let cut = error_body.is_empty();
            let err: Value = serde_json::from_str(&error_body).unwrap_or(Value::Null);
            if !stream {
                let full = match api {
                    Api::Anthropic => {
                        anthropic_message(model, &[json!({"type":"text","text":text})], "end_turn")
                            .to_string()
                    }
                    _ => gemini_chunk(&[json!({"text": text})], Some("STOP"), model).to_string(),
                };
                let half = full[..full.len() / 2].to_string();
                return streamed(200, "application/json", vec![half], true);
            }
            let mut events = match api {
                Api::Anthropic => anthropic_events(model, &text, false),
                Api::OpenAi => openai_events(&text, Some(&err)),
                Api::Gemini => vec![(None, gemini_chunk(&[json!({"text": text})], None, model))],
            };
            if !cut {
                match api {
                    Api::Anthropic => events.push((Some("error"), err)),
                    Api::OpenAi => {}
                    Api::Gemini => events.push((None, err)),
                }
            }
            if cut && api == Api::OpenAi {
                events.pop(); // no response.failed either: the stream just stops
            }
            streamed(200, "text/event-stream", sse(&events), cut)
        }
        Reply::ToolCall { name, args } => match api {
            Api::Anthropic => {
                let block = json!({"type":"tool_use","id":"toolu_fake_1","name":name,"input":args});
                if stream {
                    let ev = vec![
                        (
                            Some("message_start"),
                            json!({"type":"message_start","message":anthropic_message(model, &[], "")}),
                        ),
                        (
                            Some("content_block_start"),
                            json!({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_fake_1","name":name,"input":{}}}),
                        ),
                        (
                            Some("content_block_delta"),
                            json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":args.to_string()}}),
                        ),
                        (
                            Some("content_block_stop"),
                            json!({"type":"content_block_stop","index":0}),
                        ),
                        (
                            Some("message_delta"),
                            json!({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":5}}),
                        ),
                        (Some("message_stop"), json!({"type":"message_stop"})),
                    ];
                    streamed(200, "text/event-stream", sse(&ev), false)
                } else {
                    json_response(
                        200,
                        &[],
                        anthropic_message(model, &[block], "tool_use").to_string(),
                    )
                }
            }
            Api::OpenAi => {
                let item = json!({"id":"fc_1","type":"function_call","status":"completed","call_id":"call_fake_1","name":name,"arguments":args.to_string()});
                let ev = vec![
                    (
                        Some("response.created"),
                        json!({"type":"response.created","response":{"id":"resp_fake","object":"response","status":"in_progress","output":[]}}),
                    ),
                    (
                        Some("response.output_item.added"),
                        json!({"type":"response.output_item.added","output_index":0,"item":item}),
                    ),
                    (
                        Some("response.output_item.done"),
                        json!({"type":"response.output_item.done","output_index":0,"item":item}),
                    ),
                    (
                        Some("response.completed"),
                        json!({"type":"response.completed","response":{"id":"resp_fake","object":"response","status":"completed","output":[item],"usage":openai_usage()}}),
                    ),
                ];
                streamed(200, "text/event-stream", sse(&ev), false)
            }
            Api::Gemini => {
                let chunk = gemini_chunk(
                    &[json!({"functionCall":{"name":name,"args":args}})],
                    Some("STOP"),
                    model,
                );
                if stream {
                    streamed(200, "text/event-stream", sse(&[(None, chunk)]), false)
                } else {
                    json_response(200, &[], chunk.to_string())
                }
            }
        },
    }
}

fn anthropic_message(model: &str, content: &[Value], stop: &str) -> Value {
    json!({"id":"msg_fake_1","type":"message","role":"assistant","model":model,"content":content,
        "stop_reason": if stop.is_empty() { Value::Null } else { json!(stop) },"stop_sequence":null,
        "usage":{"input_tokens":10,"output_tokens":5}})
}

fn anthropic_events(model: &str, text: &str, complete: bool) -> Vec<(Option<&'static str>, Value)> {
    let mut ev = vec![
        (
            Some("message_start"),
            json!({"type":"message_start","message":anthropic_message(model, &[], "")}),
        ),
        (
            Some("content_block_start"),
            json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
        ),
        (Some("ping"), json!({"type":"ping"})),
        (
            Some("content_block_delta"),
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":text}}),
        ),
    ];
    if complete {
        ev.extend([
            (Some("content_block_stop"), json!({"type":"content_block_stop","index":0})),
            (Some("message_delta"), json!({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}})),
            (Some("message_stop"), json!({"type":"message_stop"})),
        ]);
    }
    ev
}

fn openai_usage() -> Value {
    json!({"input_tokens":10,"input_tokens_details":{"cached_tokens":0},"output_tokens":5,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":15})
}

/// Responses API events for one message; with `fail`, the stream ends in
/// `response.failed` carrying `fail`'s `error` object instead of completing.
fn openai_events(text: &str, fail: Option<&Value>) -> Vec<(Option<&'static str>, Value)> {
    let done_item = json!({"id":"msg_fake_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":text,"annotations":[]}]});
    let mut ev = vec![
        (
            Some("response.created"),
            json!({"type":"response.created","sequence_number":0,"response":{"id":"resp_fake","object":"response","status":"in_progress","output":[]}}),
        ),
        (
            Some("response.output_item.added"),
            json!({"type":"response.output_item.added","output_index":0,"item":{"id":"msg_fake_1","type":"message","status":"in_progress","role":"assistant","content":[]}}),
        ),
        (
            Some("response.content_part.added"),
            json!({"type":"response.content_part.added","item_id":"msg_fake_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}),
        ),
        (
            Some("response.output_text.delta"),
            json!({"type":"response.output_text.delta","item_id":"msg_fake_1","output_index":0,"content_index":0,"delta":text}),
        ),
    ];
    match fail {
        Some(err) => {
            let e = err.get("error").cloned().unwrap_or_else(|| err.clone());
            ev.push((
                Some("response.failed"),
                json!({"type":"response.failed","response":{"id":"resp_fake","object":"response","status":"failed","error":e,"output":[]}}),
            ));
        }
        None => ev.extend([
            (Some("response.output_text.done"), json!({"type":"response.output_text.done","item_id":"msg_fake_1","output_index":0,"content_index":0,"text":text})),
            (Some("response.output_item.done"), json!({"type":"response.output_item.done","output_index":0,"item":done_item})),
            (Some("response.completed"), json!({"type":"response.completed","response":{"id":"resp_fake","object":"response","status":"completed","output":[done_item],"usage":openai_usage()}})),
        ]),
    }
    ev
}

fn gemini_chunk(parts: &[Value], finish: Option<&str>, model: &str) -> Value {
    let mut cand = json!({"content":{"parts":parts,"role":"model"},"index":0});
    if let Some(f) = finish {
        cand["finishReason"] = json!(f);
    }
    json!({"candidates":[cand],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":15},"modelVersion":model,"responseId":"fake-response-1"})
}
