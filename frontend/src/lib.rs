//! The hydrate entry point: the browser half of the app (its islands),
//! nothing else.

// The app's view types nest deeply; computing their layout for the release
// WASM build exceeds the default query depth of 128.
#![recursion_limit = "256"]

#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    app::hydrate_islands();
}
