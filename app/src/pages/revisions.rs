//! `/profiles/:id/revisions`: a profile's kept revisions, and what changed
//! between any two of them, field by field, with who saved each and when.
//! The comparison is [`domain::audit::revision_changes`]; this page only
//! picks the two and lays the changes out.

use crate::api;
use crate::PageTitle;
use domain::audit::{revision_changes, ProfileRevision};
use domain::error::ApiError;
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

#[component]
pub fn RevisionsPage() -> impl IntoView {
    let params = use_params_map();
    let id = params.with_untracked(|p| p.get("id").unwrap_or_default());
    view! {
        <PageTitle text="Revisions · Provider Error Recovery"/>
        <h1>"Revisions"</h1>
        <p class="explain">
            "Every save of this profile is kept whole, with who saved it and when. Pick two to see \
             what changed between them, field by field."
        </p>
        <p><a href=format!("/profiles/{id}")>"Back to the profile"</a></p>
        <RevisionDiff profile_id=id/>
    }
}

/// The two pickers and the changes (an island: the revisions are read in
/// the browser, where the pickers are).
#[island]
fn RevisionDiff(profile_id: String) -> impl IntoView {
    let revisions: RwSignal<Option<Result<Vec<ProfileRevision>, ApiError>>> = RwSignal::new(None);
    let from = RwSignal::new(0_i64);
    let to = RwSignal::new(0_i64);
    let id = StoredValue::new(profile_id);
    Effect::new(move |_| {
        leptos::task::spawn_local(async move {
            let answer = api::profile_revisions(&id.get_value()).await;
            if let Ok(list) = &answer {
                let last = list.last().map_or(0, |r| r.revision);
                let before = list.iter().rev().nth(1).map_or(last, |r| r.revision);
                from.try_set(before);
                to.try_set(last);
            }
            revisions.try_set(Some(answer));
        });
    });
    let picked = move |which: i64| {
        revisions.with(|r| {
            r.as_ref()
                .and_then(|r| r.as_ref().ok())
                .and_then(|list| list.iter().find(|x| x.revision == which).cloned())
        })
    };
    let options = move || {
        revisions.with(|r| match r {
            Some(Ok(list)) => list
                .iter()
                .map(|r| {
                    (
                        r.revision,
                        format!(
                            "Revision {} · {} · {}",
                            r.revision,
                            r.actor.describe(),
                            r.at.format("%d %b %Y, %H:%M:%S UTC")
                        ),
                    )
                })
                .collect::<Vec<_>>(),
            _ => Vec::new(),
        })
    };
    let picker = move |label: &'static str, signal: RwSignal<i64>| {
        view! {
            <label class="revision-pick">
                <span>{label}</span>
                <select
                    aria-label=label
                    prop:value=move || signal.get().to_string()
                    on:change=move |ev| {
                        if let Ok(n) = event_target_value(&ev).parse::<i64>() {
                            signal.set(n);
                        }
                    }
                >
                    {move || options().into_iter().map(|(n, text)| view! {
                        <option value=n.to_string() selected=move || signal.get() == n>{text}</option>
                    }).collect_view()}
                </select>
            </label>
        }
    };
    view! {
        {move || match revisions.get() {
            None => view! { <p class="notice">"Loading the revisions…"</p> }.into_any(),
            Some(Err(e)) => view! { <p class="notice problem" role="alert">{e.message}</p> }.into_any(),
            Some(Ok(list)) if list.is_empty() => view! {
                <p class="notice">"No revision of this profile is kept."</p>
            }.into_any(),
            Some(Ok(_)) => view! {
                <div class="revision-pickers">
                    {picker("From", from)}
                    {picker("To", to)}
                </div>
                <RevisionChanges from=Signal::derive(move || picked(from.get())) to=Signal::derive(move || picked(to.get()))/>
            }.into_any(),
        }}
    }
}

#[component]
fn RevisionChanges(
    from: Signal<Option<ProfileRevision>>,
    to: Signal<Option<ProfileRevision>>,
) -> impl IntoView {
    move || {
        let (Some(a), Some(b)) = (from.get(), to.get()) else {
            return view! { <p class="notice">"Pick two revisions."</p> }.into_any();
        };
        let mut changes = revision_changes(&a.document, &b.document);
        if a.name != b.name {
            changes.insert(
                0,
                domain::audit::FieldChange {
                    path: "name".into(),
                    before: Some(a.name.clone()),
                    after: Some(b.name.clone()),
                },
            );
        }
        if changes.is_empty() {
            return view! {
                <p class="notice">{format!("Revisions {} and {} are the same.", a.revision, b.revision)}</p>
            }
            .into_any();
        }
        let shown = |v: Option<String>| v.unwrap_or_else(|| "(absent)".to_string());
        view! {
            <table class="revision-changes">
                <caption>{format!(
                    "{} {} from revision {} to revision {}",
                    changes.len(),
                    if changes.len() == 1 { "change" } else { "changes" },
                    a.revision,
                    b.revision
                )}</caption>
                <thead><tr><th scope="col">"Field"</th><th scope="col">"Before"</th><th scope="col">"After"</th></tr></thead>
                <tbody>
                    {changes.into_iter().map(|c| view! {
                        <tr>
                            <th scope="row"><code>{c.path}</code></th>
                            <td><code>{shown(c.before)}</code></td>
                            <td><code>{shown(c.after)}</code></td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        }
        .into_any()
    }
}
