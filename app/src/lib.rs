//! Provider Error Recovery: the web app.
//!
//! Layout (the wire types, policy and route vocabulary it shows live in
//! the `domain` crate):
//! - [`api`]: the browser's (and server renderer's) access to the REST
//!   API.
//! - [`pages`] and [`components`]: the Leptos UI — profile settings, the
//!   live route panels and the circuits page.
//!
//! Compiled twice: with `ssr` into the server, with `hydrate` into WASM.
//! The server renders every page; the browser runs only the islands
//! (`#[island]`: the profile editor, the live route list and panel, the
//! circuit cards and the sign-out button), so routing, page shells and the
//! resources they load never reach the WASM bundle. Links are plain page
//! loads.
#![forbid(unsafe_code)]

pub mod api;
pub mod components;
pub mod pages;

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet, Title};

use leptos_router::{
    components::{Route, Router, Routes, A},
    path, SsrMode,
};

/// The HTML document the server renders around [`App`].
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                // Without an icon link browsers ask for /favicon.ico, a 404.
                <link rel="icon" type="image/svg+xml" href="/favicon.svg"/>
                <HydrationScripts options islands=true/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

/// Who is looking, loaded once per page (see [`api::viewer`]).
#[derive(Clone, Copy)]
struct ViewerResource(Resource<Result<domain::error::Viewer, domain::error::ApiError>>);

/// The viewer resource [`App`] provides; await it inside a `Suspense`.
pub fn use_viewer() -> Resource<Result<domain::error::Viewer, domain::error::ApiError>> {
    expect_context::<ViewerResource>().0
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    let viewer = Resource::new(|| (), |_| api::viewer());
    provide_context(ViewerResource(viewer));
    let catalogue = Resource::new(|| (), |_| api::catalogue_in_force());
    view! {
        <Stylesheet id="leptos" href="/pkg/kandev-recovery.css"/>
        <PageTitle text="Provider Error Recovery"/>
        <Router>
            <header class="topbar">
                <A href="/profiles" attr:class="brand">"Provider Error Recovery"</A>
                <nav aria-label="Main">
                    <A href="/profiles">"Profiles"</A>
                    <A href="/routes">"Routes"</A>
                    <A href="/circuits">"Circuits"</A>
                </nav>
                <Suspense>
                    {move || Suspend::new(async move {
                        let catalogue = catalogue.await.ok();
                        viewer.await.ok().map(|v| view! { <SignedIn viewer=v catalogue/> })
                    })}
                </Suspense>
            </header>
            <main>
                <Routes fallback=|| view! { <p class="notice">"Page not found."</p> }>
                    // Whole pages, not streamed: the islands script hydrates
                    // what is in the document when the WASM has loaded.
                    <Route path=path!("/") view=pages::profiles::ProfilesPage ssr=SsrMode::Async/>
                    <Route path=path!("/profiles") view=pages::profiles::ProfilesPage ssr=SsrMode::Async/>
                    <Route path=path!("/profiles/new") view=pages::profile::NewProfilePage ssr=SsrMode::Async/>
                    <Route path=path!("/profiles/:id") view=pages::profile::ProfilePage ssr=SsrMode::Async/>
                    <Route path=path!("/profiles/:id/revisions") view=pages::revisions::RevisionsPage ssr=SsrMode::Async/>
                    <Route path=path!("/routes") view=pages::routes::RoutesPage ssr=SsrMode::Async/>
                    <Route path=path!("/routes/:id") view=pages::routes::RoutePage ssr=SsrMode::Async/>
                    <Route path=path!("/circuits") view=pages::circuits::CircuitsPage ssr=SsrMode::Async/>
                    <Route path=path!("/admin/people") view=pages::people::PeoplePage ssr=SsrMode::Async/>
                    <Route path=path!("/admin/webhooks") view=pages::webhooks::WebhooksPage ssr=SsrMode::Async/>
                    <Route path=path!("/catalogue") view=pages::catalogue::CataloguePage ssr=SsrMode::Async/>
                </Routes>
            </main>
        </Router>
    }
}

/// The document's `<title>`: what every page sets its title with.
///
/// `leptos_meta`'s `<Title>` writes its text into the server-rendered
/// page unescaped, so a profile name or a route's `caller.ref` holding
/// `</title><meta http-equiv=refresh …>` would become markup. The server
/// escapes the text itself; in the browser the title is set as text
/// (`document.title`), which needs no escaping.
#[component]
pub fn PageTitle(#[prop(into)] text: String) -> impl IntoView {
    #[cfg(feature = "ssr")]
    let text = html_escape::encode_text(&text).into_owned();
    view! { <Title text/> }
}

/// Who is signed in, and the way out; and which catalogue version this
/// server classifies with.
#[component]
fn SignedIn(
    viewer: domain::error::Viewer,
    catalogue: Option<domain::catalogue::CatalogueInForce>,
) -> impl IntoView {
    view! {
        <div class="viewer">
            {catalogue.map(|c| view! {
                <span class="catalogue-version" title=format!("The catalogue this server classifies with ({})", c.source)>
                    {format!("Catalogue {}", c.version)}
                </span>
            })}
            {viewer.may(domain::access::Permission::CatalogueRead).then(|| view! { <a href="/catalogue">"Catalogue"</a> })}
            {viewer.may(domain::access::Permission::Admin).then(|| view! { <a href="/admin/people">"People"</a> })}
            {viewer.may(domain::access::Permission::Admin).then(|| view! { <a href="/admin/webhooks">"Webhooks"</a> })}
            <span class="viewer-name">"Signed in as "<strong>{viewer.name}</strong></span>
            {viewer.session.then(|| view! { <SignOut/> })}
        </div>
    }
}

/// The sign-out button: the only interactive part of the header.
#[island]
fn SignOut() -> impl IntoView {
    let signing_out = RwSignal::new(false);
    let sign_out = move |_| {
        signing_out.set(true);
        leptos::task::spawn_local(async move {
            // Signed out or not, the next page asks for a sign-in if needed.
            let _ = api::sign_out().await;
            let _ = window().location().set_href("/");
        });
    };
    view! {
        <button type="button" class="secondary" prop:disabled=move || signing_out.get() on:click=sign_out>
            "Sign out"
        </button>
    }
}

/// The browser's start: sets up the reactive root the islands hydrate
/// under (`island_script.js` then hydrates each island on the page), and
/// marks the page as interactive once they are, which end-to-end tests wait
/// for before typing.
#[cfg(feature = "hydrate")]
pub fn hydrate_islands() {
    leptos::mount::hydrate_islands();
    // The script hydrates the islands right after this returns, one
    // microtask each; a zero timeout runs after all of them.
    set_timeout(
        || {
            if let Some(body) = document().body() {
                let _ = body.set_attribute("data-hydrated", "true");
            }
        },
        std::time::Duration::ZERO,
    );
}
