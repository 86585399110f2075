//! The browser's live view of routes: the `/api/v1/events` stream and a
//! one-second clock for countdowns, both started only in the browser.
//!
//! The stream is a `web_sys::EventSource`, which reconnects by itself and
//! resends `Last-Event-ID`. When the browser gives up (the server answered
//! with an error, say), it is reopened here with `?after=` the last event
//! seen, backing off up to 15 s. Every (re)connection calls `on_open`, so a
//! page re-reads what it shows and nothing committed while it was away is
//! missed. The server renders "Connecting…"; hydration takes it from there.

use domain::route::RouteEvent;
use leptos::prelude::*;

/// The SSE event names the server emits (`RouteEvent::kind`). EventSource
/// only delivers named events to listeners registered by name.
/// The named events the stream sends (shared with the server).
pub const EVENT_KINDS: &[domain::route::EventKind] = domain::route::EventKind::ALL;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connection {
    Connecting,
    Live,
    Reconnecting,
}

impl Connection {
    pub fn words(self) -> &'static str {
        match self {
            Connection::Connecting => "Connecting…",
            Connection::Live => "Live",
            Connection::Reconnecting => "Reconnecting…",
        }
    }

    pub fn key(self) -> &'static str {
        match self {
            Connection::Connecting => "connecting",
            Connection::Live => "live",
            Connection::Reconnecting => "reconnecting",
        }
    }
}

/// Follows route events (one route's with `route_id`) while the calling
/// component lives. `on_event` gets each event; `on_open` runs after every
/// (re)connection.
pub fn use_route_events(
    route_id: Option<String>,
    on_event: impl Fn(RouteEvent) + 'static,
    on_open: impl Fn() + 'static,
) -> ReadSignal<Connection> {
    let (connection, set_connection) = signal(Connection::Connecting);
    #[cfg(feature = "hydrate")]
    {
        let url = match &route_id {
            Some(id) => format!(
                "/api/v1/events?route_id={}",
                String::from(js_sys::encode_uri_component(id))
            ),
            None => "/api/v1/events".to_string(),
        };
        let callbacks = std::rc::Rc::new((on_event, on_open));
        Effect::new(move |_| {
            let on_event = callbacks.clone();
            let on_open = callbacks.clone();
            let stream = stream::Stream::open(
                url.clone(),
                set_connection,
                std::rc::Rc::new(move |e| (on_event.0)(e)),
                std::rc::Rc::new(move || (on_open.1)()),
            );
            let stream = send_wrapper::SendWrapper::new(stream);
            on_cleanup(move || stream.take().close());
        });
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = (route_id, on_event, on_open, set_connection);
    }
    connection
}

/// The browser's clock in milliseconds, updated every second; `None` on
/// the server and until the page is hydrated, so both render the same
/// first frame.
pub fn use_browser_clock() -> RwSignal<Option<f64>> {
    let clock = RwSignal::new(None::<f64>);
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        clock.set(Some(js_sys::Date::now()));
        let tick = gloo_timers::callback::Interval::new(1_000, move || {
            clock.try_set(Some(js_sys::Date::now()));
        });
        let tick = send_wrapper::SendWrapper::new(tick);
        on_cleanup(move || drop(tick.take()));
    });
    clock
}

/// The browser's clock now (milliseconds since the epoch).
#[cfg(feature = "hydrate")]
pub fn browser_now() -> f64 {
    js_sys::Date::now()
}

/// A time as the panels show it: in the viewer's zone in the browser
/// (`local`), in UTC while rendering on the server.
pub fn show_time(t: chrono::DateTime<chrono::Utc>, local: bool) -> String {
    use domain::words::WallTime;
    #[cfg(feature = "hydrate")]
    if local {
        let d = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(t.timestamp_millis() as f64));
        return WallTime {
            year: d.get_full_year() as i32,
            month: d.get_month() + 1,
            day: d.get_date(),
            hour: d.get_hours(),
            minute: d.get_minutes(),
            second: d.get_seconds(),
            offset_minutes: -(d.get_timezone_offset() as i32),
        }
        .format();
    }
    let _ = local;
    WallTime::utc(t).format()
}

/// The "Live" / "Reconnecting…" indicator. With `announce`, it is a status
/// region (screen readers hear changes).
#[component]
pub fn LiveIndicator(
    connection: ReadSignal<Connection>,
    #[prop(optional)] announce: bool,
) -> impl IntoView {
    view! {
        <p
            class="live"
            data-connection=move || connection.get().key()
            role=announce.then_some("status")
            aria-label=announce.then_some("Connection")
        >
            <span class="live-dot" aria-hidden="true"></span>
            {move || connection.get().words()}
        </p>
    }
}

#[cfg(feature = "hydrate")]
mod stream {
    use super::{Connection, EVENT_KINDS};
    use domain::route::RouteEvent;
    use gloo_timers::callback::Timeout;
    use leptos::prelude::*;
    use std::cell::RefCell;
    use std::rc::{Rc, Weak};
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;
    use web_sys::{Event, EventSource, MessageEvent};

    const FIRST_BACKOFF_MS: u32 = 1_000;
    const MAX_BACKOFF_MS: u32 = 15_000;

    type Listener = Closure<dyn FnMut(Event)>;

    struct Inner {
        url: String,
        source: Option<(EventSource, Vec<(&'static str, Listener)>)>,
        retry: Option<Timeout>,
        last_id: Option<i64>,
        backoff_ms: u32,
        closed: bool,
        connection: WriteSignal<Connection>,
        on_event: Rc<dyn Fn(RouteEvent)>,
        on_open: Rc<dyn Fn()>,
    }

    /// An open event stream; [`Stream::close`] ends it for good.
    pub struct Stream(Rc<RefCell<Inner>>);

    impl Stream {
        pub fn open(
            url: String,
            connection: WriteSignal<Connection>,
            on_event: Rc<dyn Fn(RouteEvent)>,
            on_open: Rc<dyn Fn()>,
        ) -> Stream {
            let inner = Rc::new(RefCell::new(Inner {
                url,
                source: None,
                retry: None,
                last_id: None,
                backoff_ms: FIRST_BACKOFF_MS,
                closed: false,
                connection,
                on_event,
                on_open,
            }));
            connect(&inner);
            Stream(inner)
        }

        pub fn close(self) {
            let mut inner = self.0.borrow_mut();
            inner.closed = true;
            inner.retry = None;
            if let Some((source, listeners)) = inner.source.take() {
                detach(&source, listeners);
            }
        }
    }

    fn detach(source: &EventSource, listeners: Vec<(&'static str, Listener)>) {
        source.close();
        for (name, l) in &listeners {
            let _ = source.remove_event_listener_with_callback(name, l.as_ref().unchecked_ref());
        }
    }

    fn connect(shared: &Rc<RefCell<Inner>>) {
        let url = {
            let inner = shared.borrow();
            if inner.closed {
                return;
            }
            match inner.last_id {
                Some(id) => {
                    let sep = if inner.url.contains('?') { '&' } else { '?' };
                    format!("{}{sep}after={id}", inner.url)
                }
                None => inner.url.clone(),
            }
        };
        let Ok(source) = EventSource::new(&url) else {
            retry_later(shared);
            return;
        };
        let weak = Rc::downgrade(shared);
        let mut listeners: Vec<(&'static str, Listener)> = Vec::new();

        let w = weak.clone();
        listeners.push((
            "open",
            Closure::new(move |_: Event| {
                let Some(s) = w.upgrade() else { return };
                let (connection, on_open) = {
                    let mut inner = s.borrow_mut();
                    inner.backoff_ms = FIRST_BACKOFF_MS;
                    (inner.connection, inner.on_open.clone())
                };
                connection.try_set(Connection::Live);
                on_open();
            }),
        ));

        for kind in EVENT_KINDS.iter().map(|k| k.as_str()).chain(["message"]) {
            let w = weak.clone();
            listeners.push((
                kind,
                Closure::new(move |ev: Event| {
                    let Some(s) = w.upgrade() else { return };
                    let Ok(msg) = ev.dyn_into::<MessageEvent>() else {
                        return;
                    };
                    let Some(data) = msg.data().as_string() else {
                        return;
                    };
                    let Ok(event) = domain::wire_json::from_str::<RouteEvent>(&data) else {
                        return;
                    };
                    let on_event = {
                        let mut inner = s.borrow_mut();
                        inner.last_id = Some(inner.last_id.unwrap_or(0).max(event.id));
                        inner.on_event.clone()
                    };
                    on_event(event);
                }),
            ));
        }

        let w = weak.clone();
        listeners.push((
            "error",
            Closure::new(move |_: Event| {
                let Some(s) = w.upgrade() else { return };
                let connection = s.borrow().connection;
                connection.try_set(Connection::Reconnecting);
                // CONNECTING: the browser retries by itself, sending
                // Last-Event-ID. CLOSED: it gave up; reopen here.
                let gave_up = s
                    .borrow()
                    .source
                    .as_ref()
                    .is_some_and(|(src, _)| src.ready_state() == EventSource::CLOSED);
                if gave_up {
                    let old = s.borrow_mut().source.take();
                    if let Some((src, listeners)) = old {
                        // Dropping a listener while it runs is not allowed:
                        // let the next turn of the event loop do it.
                        src.close();
                        leptos::task::spawn_local(async move { detach(&src, listeners) });
                    }
                    retry_later(&s);
                }
            }),
        ));

        for (name, l) in &listeners {
            let _ = source.add_event_listener_with_callback(name, l.as_ref().unchecked_ref());
        }
        shared.borrow_mut().source = Some((source, listeners));
    }

    fn retry_later(shared: &Rc<RefCell<Inner>>) {
        let weak: Weak<RefCell<Inner>> = Rc::downgrade(shared);
        let mut inner = shared.borrow_mut();
        if inner.closed {
            return;
        }
        let delay = inner.backoff_ms;
        inner.backoff_ms = (delay * 2).min(MAX_BACKOFF_MS);
        let next = Timeout::new(delay, move || {
            if let Some(s) = weak.upgrade() {
                connect(&s);
            }
        });
        // The previous timeout may be the one running this code: drop it on
        // the next turn of the event loop, not from inside its callback.
        if let Some(previous) = inner.retry.replace(next) {
            leptos::task::spawn_local(async move { drop(previous) });
        }
    }
}
