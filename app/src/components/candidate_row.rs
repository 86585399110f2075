//! One candidate in a profile: its identity, reorder and remove buttons, and
//! an expandable policy area holding the two class editors.

use super::draft::{CandidateDraft, ProfileDraft};
use super::field::{Errors, FieldMessage};
use super::policy_editor::ClassPolicyEditor;
use domain::policy::PolicyClass;
use leptos::prelude::*;

/// A labelled text input bound to a signal, with its error line.
#[component]
fn TextField(
    id: String,
    label: &'static str,
    value: RwSignal<String>,
    errors: Errors,
    field: Signal<String>,
    #[prop(optional)] placeholder: &'static str,
) -> impl IntoView {
    let error_id = format!("{id}-error");
    view! {
        <div class="field">
            <label for=id.clone()>{label}</label>
            <input
                id=id
                type="text"
                autocomplete="off"
                placeholder=placeholder
                bind:value=value
                aria-invalid=move || errors.message(&field.get()).is_some().to_string()
                aria-describedby=error_id.clone()
            />
            <FieldMessage id=error_id errors field/>
        </div>
    }
}

#[component]
pub fn CandidateRow(
    draft: ProfileDraft,
    candidate: CandidateDraft,
    errors: Errors,
) -> impl IntoView {
    let key = candidate.key;
    let index = Memo::new(move |_| {
        draft
            .candidates
            .with(|list| list.iter().position(|c| c.key == key).unwrap_or(0))
    });
    let count = Memo::new(move |_| draft.candidates.with(Vec::len));
    // Outside `view!`: a `>` inside an attribute would close the tag.
    let is_last = move || index.get() + 1 >= count.get();
    let is_only = move || count.get() <= 1;
    let path = move |suffix: &'static str| {
        Signal::derive(move || format!("candidates[{}].{suffix}", index.get()))
    };
    let class_path = move |class: PolicyClass| {
        Signal::derive(move || format!("candidates[{}].policy.{}", index.get(), class.as_str()))
    };
    let id = format!("cand-{key}");
    let body_id = format!("{id}-body");
    let expanded = candidate.expanded;
    let label = candidate.label;
    let heading = move || {
        let l = label.get();
        if l.trim().is_empty() {
            "New candidate".to_string()
        } else {
            l
        }
    };
    let subtitle = {
        let c = candidate.clone();
        move || {
            let parts: Vec<String> = [c.agent.get(), c.provider_id.get(), c.model_id.get()]
                .into_iter()
                .filter(|s| !s.trim().is_empty())
                .collect();
            parts.join(" · ")
        }
    };
    // A row whose fields hold errors opens, so the messages are visible.
    let has_errors = move || {
        let prefix = format!("candidates[{}].", index.get());
        errors
            .inline
            .with(|e| e.iter().any(|e| e.field.starts_with(&prefix)))
            || errors
                .server
                .with(|e| e.iter().any(|e| e.field.starts_with(&prefix)))
    };

    // Not `<Show>` (type-erased views; see the route list).
    let needs_attention = Memo::new(move |_| has_errors());

    view! {
        <li class="candidate" class:open=move || expanded.get() data-key=key.to_string()>
            <div class="candidate-head">
                <span class="ordinal" aria-hidden="true">{move || index.get() + 1}</span>
                <div class="candidate-title">
                    <strong class="candidate-label">{heading}</strong>
                    <span class="muted">{subtitle}</span>
                    {move || needs_attention.get().then(|| view! {
                        <span class="badge error">"Needs attention"</span>
                    })}
                </div>
                <div class="row-actions">
                    <button
                        type="button"
                        class="secondary"
                        aria-controls=body_id.clone()
                        aria-expanded=move || expanded.get().to_string()
                        on:click=move |_| expanded.update(|e| *e = !*e)
                    >
                        {move || if expanded.get() { "Hide policy" } else { "Edit policy" }}
                    </button>
                    <button
                        type="button"
                        class="secondary"
                        aria-label=move || format!("Move up: {}", heading())
                        prop:disabled=move || index.get() == 0
                        on:click=move |_| draft.shift(key, -1)
                    >
                        "Move up"
                    </button>
                    <button
                        type="button"
                        class="secondary"
                        aria-label=move || format!("Move down: {}", heading())
                        prop:disabled=is_last
                        on:click=move |_| draft.shift(key, 1)
                    >
                        "Move down"
                    </button>
                    <button
                        type="button"
                        class="danger"
                        aria-label=move || format!("Remove: {}", heading())
                        prop:disabled=is_only
                        on:click=move |_| draft.remove(key)
                    >
                        "Remove"
                    </button>
                </div>
            </div>
            <div class="candidate-body" id=body_id hidden=move || !(expanded.get() || has_errors())>
                <fieldset class="identity">
                    <legend>"Candidate"</legend>
                    <TextField id=format!("{id}-label") label="Label" value=candidate.label errors field=path("label") placeholder="Claude Code (Sonnet)"/>
                    <TextField id=format!("{id}-agent") label="Agent" value=candidate.agent errors field=path("agent") placeholder="claude-code"/>
                    <TextField id=format!("{id}-provider") label="Provider" value=candidate.provider_id errors field=path("provider_id") placeholder="anthropic"/>
                    <TextField id=format!("{id}-model") label="Model" value=candidate.model_id errors field=path("model_id") placeholder="claude-sonnet-4-5"/>
                    <TextField id=format!("{id}-ref") label="Profile reference" value=candidate.profile_ref errors field=path("profile_ref") placeholder="optional"/>
                    <TextField id=format!("{id}-account") label="Account (shared circuit)" value=candidate.account_ref errors field=path("account_ref") placeholder="optional, e.g. team-a"/>
                </fieldset>
                <div class="policy-area">
                    <ClassPolicyEditor id=format!("{id}-transient") draft=candidate.transient path=class_path(PolicyClass::Transient) errors/>
                    <ClassPolicyEditor id=format!("{id}-hard") draft=candidate.hard path=class_path(PolicyClass::Hard) errors/>
                </div>
            </div>
        </li>
    }
}
