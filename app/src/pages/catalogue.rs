//! `/catalogue`: the catalogue in force and the failures it did not
//! recognise — the unknown log by count and recency, with the route
//! attempts each was seen in, and how many of them the catalogue in force
//! now classifies (after a reload, what the new version changed). The
//! page for growing the catalogue (unknown → fixture → rule → check →
//! reload); it needs `catalogue:read`. Rendered on the server only: it
//! has nothing to click but links.

use crate::api;
use crate::PageTitle;
use domain::catalogue::{CatalogueInForce, UnknownEntry, UnknownReclassification};
use domain::error::ApiError;
use leptos::prelude::*;

#[component]
pub fn CataloguePage() -> impl IntoView {
    let viewer = crate::use_viewer();
    let in_force = Resource::new(|| (), |_| api::catalogue_in_force());
    let log = Resource::new(|| (), |_| api::unknown_log());
    let reclassified = Resource::new(|| (), |_| api::reclassify_unknown());
    view! {
        <PageTitle text="Catalogue · Provider Error Recovery"/>
        <h1>"Catalogue"</h1>
        <p class="explain">
            "The catalogue turns each failure into a code and a class. Failures it did not recognise \
             stop for a person and are logged here, sanitised, with the attempts they came from. To \
             teach it one: "<code>"kandev-recovery catalogue fixture-from-unknown ID"</code>
            " writes a fixture to label, a rule decides it, "<code>"catalogue check DIR"</code>
            " validates the directory and a reload puts it in force."
        </p>
        <Suspense fallback=|| view! { <p class="notice">"Loading the catalogue…"</p> }>
            {move || Suspend::new(async move {
                let may = viewer
                    .await
                    .is_ok_and(|v| v.may(domain::access::Permission::CatalogueRead));
                if !may {
                    return view! {
                        <p class="notice problem" role="alert">
                            "The unknown log needs the catalogue:read permission."
                        </p>
                    }
                    .into_any();
                }
                let in_force = in_force.await;
                let log = log.await;
                let reclassified = reclassified.await;
                view! {
                    {in_force.ok().map(|c| view! { <InForce catalogue=c/> })}
                    {match reclassified {
                        Ok(r) => view! { <Reclassified report=r/> }.into_any(),
                        Err(ApiError { message, .. }) => {
                            view! { <p class="notice problem" role="alert">{message}</p> }.into_any()
                        }
                    }}
                    {match log {
                        Ok(log) => view! {
                            <Unknowns entries=log.entries capacity=log.capacity evicted=log.evicted/>
                        }
                        .into_any(),
                        Err(ApiError { message, .. }) => {
                            view! { <p class="notice problem" role="alert">{message}</p> }.into_any()
                        }
                    }}
                }
                .into_any()
            })}
        </Suspense>
    }
}

/// The version in force and where it came from.
#[component]
fn InForce(catalogue: CatalogueInForce) -> impl IntoView {
    let from = match &catalogue.directory {
        Some(dir) => format!("the directory {dir}"),
        None => "the catalogue embedded in the binary".to_string(),
    };
    view! {
        <section class="catalogue-in-force" aria-labelledby="in-force">
            <h2 id="in-force">"In force"</h2>
            <dl class="facts">
                <div class="fact"><dt>"Version"</dt><dd>{catalogue.version}</dd></div>
                <div class="fact"><dt>"Loaded from"</dt><dd>{from}</dd></div>
                <div class="fact"><dt>"Loaded at"</dt><dd>{catalogue.loaded_at.to_rfc3339()}</dd></div>
                <div class="fact"><dt>"Rules"</dt><dd>{catalogue.rule_count}</dd></div>
            </dl>
        </section>
    }
}

/// How many logged unknowns the catalogue in force now classifies.
#[component]
fn Reclassified(report: UnknownReclassification) -> impl IntoView {
    let summary = format!(
        "Catalogue {} now classifies {} of {} logged unknowns ({} sightings); {} stay unknown.",
        report.catalogue_version,
        report.classified,
        report.entries,
        report.classified_sightings,
        report.still_unknown
    );
    view! {
        <section class="reclassified" aria-labelledby="reclassified">
            <h2 id="reclassified">"Now classified"</h2>
            <p class="reclassify-summary">{summary}</p>
            {(!report.by_code.is_empty()).then(|| view! {
                <table class="by-code">
                    <thead><tr><th>"Code"</th><th>"Class"</th><th>"Entries"</th><th>"Sightings"</th></tr></thead>
                    <tbody>
                        {report.by_code.into_iter().map(|c| view! {
                            <tr><td>{c.code}</td><td>{c.class}</td><td>{c.entries}</td><td>{c.sightings}</td></tr>
                        }).collect_view()}
                    </tbody>
                </table>
            })}
        </section>
    }
}

/// The unknown log, most sightings first, then most recent.
#[component]
fn Unknowns(entries: Vec<UnknownEntry>, capacity: usize, evicted: u64) -> impl IntoView {
    let bound = format!(
        "The log keeps {capacity} distinct failures; {evicted} seen longest ago were dropped."
    );
    let empty = entries.is_empty();
    view! {
        <section class="unknowns" aria-labelledby="unknowns">
            <h2 id="unknowns">"Unknown failures"</h2>
            <p class="explain">{bound}</p>
            {empty.then(|| view! { <p class="notice">"Nothing unrecognised has been logged."</p> })}
            <ul class="unknown-list">
                {entries.into_iter().map(|e| view! { <li><UnknownCard entry=e/></li> }).collect_view()}
            </ul>
        </section>
    }
}

#[component]
fn UnknownCard(entry: UnknownEntry) -> impl IntoView {
    let who = [
        entry.agent.clone(),
        entry.provider_id.clone(),
        entry.model_id.clone(),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" · ");
    let command = format!(
        "kandev-recovery catalogue fixture-from-unknown {}",
        entry.id
    );
    let id = entry.id.clone();
    view! {
        <article class="unknown-card" data-id=id>
            <p class="unknown-excerpt"><code>{entry.safe_excerpt}</code></p>
            <dl class="facts">
                <div class="fact"><dt>"Seen"</dt><dd>{format!("{} times", entry.count)}</dd></div>
                <div class="fact"><dt>"First seen"</dt><dd>{entry.first_seen.to_rfc3339()}</dd></div>
                <div class="fact"><dt>"Last seen"</dt><dd>{entry.last_seen.to_rfc3339()}</dd></div>
                {(!who.is_empty()).then(|| view! { <div class="fact"><dt>"From"</dt><dd>{who}</dd></div> })}
                <div class="fact"><dt>"Rule"</dt><dd>{entry.classifier_rule}</dd></div>
                <div class="fact"><dt>"Id"</dt><dd><code>{entry.id}</code></dd></div>
            </dl>
            {(!entry.attempts.is_empty()).then(|| view! {
                <p class="unknown-attempts">
                    "Attempts: "
                    {entry.attempts.into_iter().map(|a| {
                        let href = format!("/routes/{}", a.route_id);
                        let text = format!("{} #{}", a.route_id, a.attempt_seq);
                        view! { <a class="unknown-attempt" href=href>{text}</a>" " }
                    }).collect_view()}
                </p>
            })}
            <p class="unknown-command"><code>{command}</code></p>
        </article>
    }
}
