//! The schema DSL and the three document definitions written in it (config.md §4–§6, §9).
//!
//! One Rust definition per document both validates a decoded `serde_json::Value` (structure plus the byte-bound
//! rules of config.md §2.8 and the integer-token rule of config.md §2.3) and emits the published JSON Schema
//! (draft 2020-12), so the two cannot drift (config.md §9.2). Defaults are part of the definition, so
//! normalisation and the installation projection insert exactly what the published schema documents.
//!
//! This module owns structure only. Semantic checks (origins, references, endpoints, …) and the mapping
//! to startup codes live in the document modules `config::{gateway, host, manifest}`; encoding the
//! published schemas and writing them to `schemas/` is the staleness gate's concern (`tests/repo/schemas.rs`).

/// The published description of every document's `$schema` member (config.md §9.7).
pub const SCHEMA_HINT: &str = "Editor hint, no effect: the published schema URL, or a relative path (no scheme, not absolute) whose last segment is this schema's file name, such as ../../schemas/<file>.";

pub mod defaults;
pub mod emit;
pub mod gateway;
pub mod host;
pub mod manifest;
pub mod node;
pub mod patterns;
#[cfg(test)]
pub mod shapes;
#[cfg(test)]
pub mod testing;
pub mod validate;

use std::sync::{Arc, Mutex, PoisonError};

pub use defaults::fill_defaults;
pub use node::Schema;
use serde_json::Value;
pub use validate::{validate, SchemaError, SchemaErrorKind};

use emit::Publication;

/// The gateway document definition, built on first use (its patterns are compiled once) and held until
/// [`release`].
pub static GATEWAY: Held = Held::new(gateway::definition);

/// The host document definition, built on first use and held until [`release`].
pub static HOST: Held = Held::new(host::definition);

/// The application manifest definition, built on first use and held until [`release`].
pub static APPLICATION: Held = Held::new(manifest::definition);

/// A document definition built on first use and held until [`release`]. Serve mode needs the three only
/// while it loads its documents (there is no reload, lifecycle.md §8.2), and their compiled patterns are
/// about a megabyte of heap that an idle gateway would otherwise keep for its whole life (docs/decisions.md
/// "The quickstart's idle memory (issue 27)"). A use after the release builds the definition again.
pub struct Held {
    build: fn() -> Schema,
    slot: Mutex<Option<Arc<Schema>>>,
}

impl Held {
    const fn new(build: fn() -> Schema) -> Self {
        Held { build, slot: Mutex::new(None) }
    }

    /// The definition, built now if it is not held.
    pub fn get(&self) -> Arc<Schema> {
        // The slot only ever holds a finished definition, so a panic elsewhere leaves nothing half-made.
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        slot.get_or_insert_with(|| Arc::new((self.build)())).clone()
    }

    fn release(&self) {
        let held = self.slot.lock().unwrap_or_else(PoisonError::into_inner).take();
        drop(held);
    }
}

/// Drops the three held definitions (serve mode, once its documents are loaded and it is ready). A
/// definition still in use by a caller lives until that caller is done with it.
pub fn release() {
    for held in [&GATEWAY, &HOST, &APPLICATION] {
        held.release();
    }
}

/// The sentence every published root ends its description with (config.md §9.3).
const BOUNDS: &str = "Every minLength and maxLength counts the UTF-8 bytes of the decoded string, not code \
points; a string without a stated bound holds at most 4,096 bytes, no string contains NUL, CR or LF (except \
where a description below allows LF), and every member name holds at most 256 bytes without NUL, CR or LF. \
Semantic rules and the startup code of every violation are defined in the ptc-gateway specification \
(config.md); where a generic JSON Schema validator and the gateway disagree, the gateway is normative. \
Generated from the gateway's code: do not edit.";

/// The published schema of the gateway document (config.md §9.1): serve-mode `required` lists.
pub fn gateway_schema() -> Value {
    let description = format!(
        "The ptc-gateway gateway document, contract version 1 (config.md §4): listener, bearer binding, host \
         document, admission bounds, served tools with their pins, and optional private audit, artifacts and \
         PCC front. The three pin members of a tool are required to serve and optional with --print-pins. \
         {BOUNDS}"
    );
    published(&GATEWAY.get(), gateway::ID, "ptc-gateway gateway document v1", description)
}

/// The published schema of the host document (config.md §9.1).
pub fn host_schema() -> Value {
    let description = format!(
        "The ptc-gateway host document (config.md §5): the credential bindings the gateway may capture and \
         the upstream installations applications may select. Installations of a reserved source and the \
         members of oauth are not interpreted beyond the byte bounds. {BOUNDS}"
    );
    published(&HOST.get(), host::ID, "ptc-gateway host document", description)
}

/// The published schema of the application manifest `ptc.json` (config.md §9.1).
pub fn application_schema() -> Value {
    let description = format!(
        "The ptc-gateway application manifest ptc.json, version 1 (config.md §6): effect, input and result \
         contracts, a Luau or forward workflow, missions and provider selections. {BOUNDS}"
    );
    published(&APPLICATION.get(), manifest::ID, "ptc-gateway application manifest v1", description)
}

fn published(schema: &Schema, id: &str, title: &str, description: String) -> Value {
    emit::publish(schema, &Publication { id, title, description: &description })
}

/// The definition of one `install.<alias>` entry inside the host definition `host` ([`HOST`]), for the
/// installation projection.
pub fn installation_schema(host: &Schema) -> Option<&Schema> {
    let Schema::Object(root) = host else {
        return None;
    };
    match &root.property("install")?.schema {
        Schema::Object(install) => match &install.additional {
            node::Additional::Each(each) => Some(each),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::node::{Additional, ObjectSchema, Schema};
    use super::*;
    use crate::config::Mode;

    /// Every node of a definition, depth first.
    fn walk<'a>(schema: &'a Schema, out: &mut Vec<&'a Schema>) {
        out.push(schema);
        let object = |o: &'a ObjectSchema, out: &mut Vec<&'a Schema>| {
            for p in &o.properties {
                walk(&p.schema, out);
            }
            if let Additional::Each(each) = &o.additional {
                walk(each, out);
            }
        };
        match schema {
            Schema::Object(o) => object(o, out),
            Schema::Array(a) => walk(&a.items, out),
            Schema::Union(u) => u.variants.iter().for_each(|v| object(&v.object, out)),
            Schema::OneOf(shapes) => shapes.iter().for_each(|s| walk(s, out)),
            _ => {}
        }
    }

    fn definitions() -> [Arc<Schema>; 3] {
        [GATEWAY.get(), HOST.get(), APPLICATION.get()]
    }

    #[test]
    fn every_pattern_compiles_and_is_anchored() {
        for def in definitions() {
            let mut nodes = Vec::new();
            walk(&def, &mut nodes);
            let mut strings: Vec<&node::StringSchema> = Vec::new();
            for n in &nodes {
                match n {
                    Schema::String(s) => strings.push(s),
                    Schema::Object(o) => strings.extend(o.names.as_ref()),
                    _ => {}
                }
            }
            for s in strings {
                if let Some(p) = &s.pattern {
                    assert!(p.regex.is_some(), "pattern {} does not compile", p.source);
                    assert!(p.source.starts_with('^') && p.source.ends_with('$'), "{}", p.source);
                }
            }
        }
    }

    #[test]
    fn every_default_satisfies_its_own_schema() {
        for def in definitions() {
            let mut nodes = Vec::new();
            walk(&def, &mut nodes);
            for n in nodes {
                let Schema::Object(o) = n else { continue };
                for p in &o.properties {
                    if let Some(default) = &p.default {
                        let mut filled = default.clone();
                        fill_defaults(&p.schema, &mut filled);
                        assert_eq!(
                            validate(&p.schema, &filled, Mode::Serve),
                            Ok(()),
                            "default of {}",
                            p.name
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_released_definition_is_built_again_and_a_held_one_stays_whole() {
        let before = HOST.get();
        release();
        let after = HOST.get();
        assert!(!Arc::ptr_eq(&before, &after));
        assert!(matches!(installation_schema(&before), Some(Schema::Union(u)) if u.tag == "source"));
        assert!(Arc::ptr_eq(&after, &HOST.get()));
    }

    #[test]
    fn installation_schema_is_the_source_union() {
        assert!(matches!(installation_schema(&HOST.get()), Some(Schema::Union(u)) if u.tag == "source"));
    }

    #[test]
    fn published_roots_carry_id_title_and_description() {
        for (value, id) in
            [(gateway_schema(), gateway::ID), (host_schema(), host::ID), (application_schema(), manifest::ID)]
        {
            assert_eq!(value.get("$id").and_then(Value::as_str), Some(id));
            assert_eq!(value.get("$schema").and_then(Value::as_str), Some(emit::DRAFT_2020_12));
            assert!(value.get("title").and_then(Value::as_str).is_some());
            let description = value.get("description").and_then(Value::as_str).unwrap();
            assert!(description.contains("UTF-8 bytes") && description.contains("config.md"));
            assert_eq!(value.get("additionalProperties"), Some(&Value::Bool(false)));
        }
        // Serve-mode `required` list of a tool (config.md §9.1).
        let tool = gateway_schema();
        let required = tool.pointer("/properties/tools/items/required").and_then(Value::as_array).unwrap();
        assert!(required.contains(&Value::from("provider_snapshot_pins")));
    }
}
