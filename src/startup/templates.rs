//! Stage 5 (lifecycle.md §3.2): every tool's template, in name order, then the catalog checks.

use crate::config::Mode;
use crate::startup::documents::Documents;
use crate::startup::StartupCode;

/// One built tool (placeholder until the application builder lands).
pub struct Template {
    name: String,
    content_pin: String,
    /// The names of its provider declarations (both lists).
    declarations: Vec<String>,
}

impl Template {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn content_pin(&self) -> &str {
        &self.content_pin
    }
}

/// `D` of lifecycle.md §10.1: provider declarations over all served tools, counted per tool.
pub fn declaration_count(built: &[Template]) -> u64 {
    built.iter().map(|t| t.declarations.len() as u64).sum()
}

/// Every installation alias some served tool selects, sorted, without repetition.
pub fn selected_aliases(built: &[Template]) -> Vec<&str> {
    let mut aliases: Vec<&str> =
        built.iter().flat_map(|t| t.declarations.iter().map(String::as_str)).collect();
    aliases.sort_unstable();
    aliases.dedup();
    aliases
}

/// Builds every template.
///
/// PROVISIONAL: 5a, 5b, a content pin over the named files, 5d, and 5g, until the application builder
/// (`crate::apps`) replaces this with the full 5a–5i.
pub fn build(docs: &Documents, mode: Mode) -> Result<Vec<Template>, StartupCode> {
    use crate::config::manifest::{self, EventsPolicy, Workflow};
    use crate::json::canonical::{qualified, sha256, typed_canonical};
    let mut out = Vec::new();
    for tool in &docs.gateway.tools {
        let bytes = crate::config::paths::read_document(&tool.manifest, 1_000_000)
            .map_err(|_| StartupCode::TemplateInvalid)?;
        let m = manifest::parse(&bytes)?;
        if m.events_policy == EventsPolicy::Private {
            return Err(StartupCode::TemplateInvalid);
        }
        let dir = crate::config::paths::document_dir(&tool.manifest);
        let read = |p: &str| std::fs::read(dir.join(p)).map_err(|_| StartupCode::TemplateInvalid);
        let mut records: Vec<(u8, String, Vec<u8>)> = vec![(1, String::new(), typed_canonical(&m.document))];
        records.push((4, "input".into(), read(&m.input_contract)?));
        records.push((5, "result".into(), read(&m.result_contract)?));
        let mut components = Vec::new();
        if let Workflow::Luau { components: c, .. } = &m.workflow {
            components.extend(c.iter().map(|c| (format!("workflow/{}", c.id), c)));
        }
        for (name, mission) in &m.missions {
            components.extend(mission.components.iter().map(|c| (format!("mission/{name}/{}", c.id), c)));
        }
        for (name, c) in components {
            records.push((2, name.clone(), read(&c.path)?));
            let deps = crate::json::Value::Array(c.dependencies.iter().map(|d| d.as_str().into()).collect());
            records.push((6, name, typed_canonical(&deps)));
        }
        records.sort_by(|a, b| (a.0, a.1.as_bytes()).cmp(&(b.0, b.1.as_bytes())));
        let mut stream = b"ptc-gateway.application-content.v1\0".to_vec();
        stream.extend_from_slice(&(records.len() as u32).to_be_bytes());
        for (kind, name, payload) in &records {
            stream.push(*kind);
            stream.extend_from_slice(&(name.len() as u32).to_be_bytes());
            stream.extend_from_slice(name.as_bytes());
            stream.extend_from_slice(&(payload.len() as u64).to_be_bytes());
            stream.extend_from_slice(payload);
        }
        let pin = qualified(&sha256(&stream));
        if mode == Mode::Serve && tool.expected_application_content_digest.as_deref() != Some(pin.as_str()) {
            return Err(StartupCode::ApplicationContentDigestMismatch);
        }
        let declarations: Vec<String> =
            m.mission_providers.iter().chain(&m.workflow_providers).map(|s| s.name.clone()).collect();
        if !declarations.is_empty() {
            return Err(StartupCode::ProviderSourceUnsupported);
        }
        if m.effect == crate::config::manifest::Effect::Write && !tool.allow_write {
            return Err(StartupCode::WriteForbidden);
        }
        out.push(Template { name: tool.name.clone(), content_pin: pin, declarations });
    }
    Ok(out)
}
