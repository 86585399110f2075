//! The editor for one class policy of one candidate: the class explained in
//! visible text with examples, the retry and reset-wait controls, the
//! exhausted outcome, and the schedule those values imply.

use super::draft::{ClassDraft, DurationDraft, Unit, INTERVAL_UNITS, WAIT_UNITS};
use super::field::{Errors, FieldMessage};
use domain::policy::limits::*;
use domain::policy::reader::Errors as ReadErrors;
use domain::policy::validate::read_class_policy;
use domain::policy::{describe, OnExhausted, PolicyClass};
use leptos::prelude::*;

fn title(class: PolicyClass) -> &'static str {
    match class {
        PolicyClass::Transient => "Transient errors",
        PolicyClass::Hard => "Hard errors",
    }
}

fn explanation(class: PolicyClass) -> &'static str {
    match class {
        PolicyClass::Transient => {
            "The provider, the network or the model is briefly unable to serve: for example \
             529 Overloaded, a dropped connection, a per-minute rate limit, a model at capacity."
        }
        PolicyClass::Hard => {
            "The account, credentials or configuration cannot go on without a longer reset or a \
             change by you: for example a 5-hour usage limit, an expired login, a missing API key, \
             an unknown model."
        }
    }
}

/// A number input with its unit select, label and error.
#[component]
fn DurationInput(
    id: String,
    label: &'static str,
    draft: DurationDraft,
    units: &'static [Unit],
    disabled: Signal<bool>,
    errors: Errors,
    field: Signal<String>,
) -> impl IntoView {
    let error_id = format!("{id}-error");
    let invalid = move || errors.message(&field.get()).is_some();
    view! {
        <div class="field">
            <label for=id.clone()>{label}</label>
            <div class="with-unit">
                <input
                    id=id.clone()
                    type="text"
                    inputmode="decimal"
                    autocomplete="off"
                    bind:value=draft.amount
                    prop:disabled=disabled
                    aria-invalid=move || invalid().to_string()
                    aria-describedby=error_id.clone()
                />
                <select
                    aria-label=format!("{label} unit")
                    prop:disabled=disabled
                    on:change=move |ev| draft.unit.set(Unit::parse(&event_target_value(&ev)))
                >
                    {units
                        .iter()
                        .map(|u| {
                            let u = *u;
                            view! {
                                <option value=u.key() selected=move || draft.unit.get() == u>
                                    {u.key()}
                                </option>
                            }
                        })
                        .collect_view()}
                </select>
            </div>
            <FieldMessage id=error_id errors field/>
        </div>
    }
}

#[component]
pub fn ClassPolicyEditor(
    /// Prefix of ids in this editor, unique on the page.
    id: String,
    draft: ClassDraft,
    /// Path of this class policy in the profile body, e.g.
    /// `candidates[0].policy.transient`.
    path: Signal<String>,
    errors: Errors,
) -> impl IntoView {
    let class = draft.class;
    let at = move |suffix: &'static str| Signal::derive(move || format!("{}.{suffix}", path.get()));
    let retry_off = Signal::derive(move || !draft.retry_enabled.get());
    let wait_off = Signal::derive(move || !draft.wait_enabled.get());
    let heading_id = format!("{id}-title");
    let max_retries_id = format!("{id}-max-retries");
    let max_retries_field = at("retry.max_retries");
    let outcome_name = format!("{id}-outcome");

    // The preview runs the shared validator on this class alone; while any
    // field is invalid it asks for a fix instead of guessing.
    let preview = move || {
        let mut errs = ReadErrors::default();
        match read_class_policy(&draft.to_json(), "", &mut errs) {
            Some(p) => describe(&p),
            None => "Fix the highlighted fields to see the schedule.".to_string(),
        }
    };

    view! {
        <section class="class-policy" aria-labelledby=heading_id.clone() data-class=class.as_str()>
            <h4 id=heading_id.clone()>{title(class)}</h4>
            <p class="explain">{explanation(class)}</p>

            <label class="toggle">
                <input type="checkbox" role="switch" bind:checked=draft.retry_enabled/>
                <span>"Retry the same candidate"</span>
            </label>
            <div class="field-row" class:muted=retry_off>
                <div class="field">
                    <label for=max_retries_id.clone()>"Maximum retries"</label>
                    <input
                        id=max_retries_id.clone()
                        type="text"
                        inputmode="numeric"
                        autocomplete="off"
                        bind:value=draft.max_retries
                        prop:disabled=retry_off
                        aria-invalid=move || errors.message(&max_retries_field.get()).is_some().to_string()
                        aria-describedby=format!("{max_retries_id}-error")
                    />
                    <FieldMessage id=format!("{max_retries_id}-error") errors field=max_retries_field/>
                </div>
                <DurationInput
                    id=format!("{id}-initial-interval")
                    label="Initial interval"
                    draft=draft.initial
                    units=INTERVAL_UNITS
                    disabled=retry_off
                    errors
                    field=at("retry.initial_interval_seconds")
                />
            </div>
            <p class="hint">
                {format!(
                    "{MIN_RETRIES}–{MAX_RETRIES} retries; the first after the initial interval \
                     (1 s to 1 h), each later one twice as long, none longer than 24 h."
                )}
            </p>

            <label class="toggle">
                <input type="checkbox" role="switch" bind:checked=draft.wait_enabled/>
                <span>"Wait for the provider's reset time"</span>
            </label>
            <div class="field-row" class:muted=wait_off>
                <DurationInput
                    id=format!("{id}-max-wait")
                    label="Maximum wait"
                    draft=draft.max_wait
                    units=WAIT_UNITS
                    disabled=wait_off
                    errors
                    field=at("wait_for_reset.max_wait_seconds")
                />
            </div>
            <p class="hint">
                "Reset waiting applies only to trusted future reset times within the maximum (up to 7 days). \
                 A later reset is never shortened: recovery goes on to retries or the outcome below. \
                 It is used at most once per candidate and class in a route cycle."
            </p>

            <fieldset class="outcome">
                <legend>"When recovery is exhausted"</legend>
                <label class="choice">
                    <input
                        type="radio"
                        name=outcome_name.clone()
                        value="skip"
                        prop:checked=move || draft.on_exhausted.get() == OnExhausted::Skip
                        on:change=move |_| draft.on_exhausted.set(OnExhausted::Skip)
                    />
                    <span>"Skip candidate"</span>
                </label>
                <label class="choice">
                    <input
                        type="radio"
                        name=outcome_name
                        value="stop"
                        prop:checked=move || draft.on_exhausted.get() == OnExhausted::Stop
                        on:change=move |_| draft.on_exhausted.set(OnExhausted::Stop)
                    />
                    <span>"Stop"</span>
                </label>
            </fieldset>

            <p class="preview" aria-live="polite">
                <span class="preview-label">"Schedule: "</span>
                <span class="preview-text">{preview}</span>
            </p>
        </section>
    }
}
