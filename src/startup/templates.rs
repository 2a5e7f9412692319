//! Stage 5 (lifecycle.md §3.2): every tool's template, in name order, then the catalog checks.

use crate::config::Mode;
use crate::startup::documents::Documents;
use crate::startup::StartupCode;

/// One built tool (placeholder until the application builder lands).
pub struct Template {
    name: String,
    content_pin: String,
}

impl Template {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn content_pin(&self) -> &str {
        &self.content_pin
    }
}

/// Builds every template.
pub fn build(docs: &Documents, mode: Mode) -> Result<Vec<Template>, StartupCode> {
    let _ = (docs, mode);
    Err(StartupCode::InternalError)
}
