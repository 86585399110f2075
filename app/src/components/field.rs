//! Where field errors come from and where they are shown. Inline errors
//! are the shared validator's verdict on the current form; server errors
//! are the last 422 answer, shown at the same fields until the next edit.

use domain::policy::FieldError;
use leptos::prelude::*;

#[derive(Debug, Clone, Copy)]
pub struct Errors {
    pub inline: Memo<Vec<FieldError>>,
    pub server: RwSignal<Vec<FieldError>>,
}

impl Errors {
    /// The message for `field`: the browser's own check first, then the
    /// server's.
    pub fn message(&self, field: &str) -> Option<String> {
        let find = |list: &Vec<FieldError>| {
            list.iter()
                .find(|e| e.field == field)
                .map(|e| e.message.clone())
        };
        self.inline.with(find).or_else(|| self.server.with(find))
    }
}

/// The error line under an input; empty (but present, for
/// `aria-describedby`) when the field is fine.
#[component]
pub fn FieldMessage(
    id: String,
    errors: Errors,
    #[prop(into)] field: Signal<String>,
) -> impl IntoView {
    let message = move || errors.message(&field.get());
    view! {
        <p id=id class="field-error" role="alert" aria-live="polite">
            {move || message().unwrap_or_default()}
        </p>
    }
}
