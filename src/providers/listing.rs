//! Tool listing at acquisition (providers.md §7.2, §7.3, §7.4 `tools`): the page messages, the page and
//! tool bounds, cursor repetition, and the mapped-tool checks that produce the tool facts.
//!
//! Also the part of the facts a mission's `handle:api()` shows ([`ListedTool`], execution.md §12.5), kept
//! on each site at acquisition. This file is pure; `acquire.rs` sends the pages it asks for.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::failure::FailureClass;
use super::framing::Message;
use super::negotiate::modern_meta;
use crate::config::host::{ToolEffect, ToolMapping};

/// Listing limits (providers.md §15).
pub const MAX_PAGES: usize = 100;
pub const MAX_TOOLS: usize = 4_096;

/// What a mission's `handle:api()` shows of one listed tool (execution.md §12.5): its `description` when
/// that is a string, and its `inputSchema`, both as acquisition listed (and the snapshot pin covered) them.
#[derive(Clone, Debug, PartialEq)]
pub struct ListedTool {
    pub description: Option<String>,
    pub input_schema: Arc<Value>,
    /// Its listed `outputSchema`, when it has one (the result type of its signature, models.md §8.2).
    pub output_schema: Option<Arc<Value>>,
}

/// The [`ListedTool`] of each tool fact (`Listing::mapped_facts`), by upstream name.
pub fn listed_tools(facts: &[Value]) -> BTreeMap<String, ListedTool> {
    facts
        .iter()
        .filter_map(|fact| {
            let name = fact.get("name")?.as_str()?.to_owned();
            let description = fact.get("description").and_then(Value::as_str).map(str::to_owned);
            let input_schema = Arc::new(fact.get("input_schema")?.clone());
            let output_schema =
                fact.get("output_schema").filter(|v| v.as_object().is_some()).cloned().map(Arc::new);
            Some((name, ListedTool { description, input_schema, output_schema }))
        })
        .collect()
}

/// The negotiated era (providers.md §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    Modern,
    Legacy,
}

impl Era {
    pub fn as_str(self) -> &'static str {
        match self {
            Era::Modern => "modern",
            Era::Legacy => "legacy",
        }
    }
}

/// The listing in progress.
#[derive(Default)]
pub struct Listing {
    sent_cursors: BTreeSet<String>,
    pages: usize,
    tools: BTreeMap<String, Map<String, Value>>,
}

/// `params` of a `tools/list` page (providers.md §7.2); `None` means no `params` member (legacy first page).
pub fn page_params(era: Era, version: &str, cursor: Option<&str>) -> Option<Value> {
    let mut params = Map::new();
    if era == Era::Modern {
        params.insert("_meta".to_owned(), Value::Object(modern_meta(version)));
    }
    if let Some(cursor) = cursor {
        params.insert("cursor".to_owned(), Value::String(cursor.to_owned()));
    }
    (!params.is_empty()).then_some(Value::Object(params))
}

impl Listing {
    /// Record that a page with `cursor` is being sent.
    pub fn sending(&mut self, cursor: Option<&str>) {
        if let Some(cursor) = cursor {
            self.sent_cursors.insert(cursor.to_owned());
        }
        self.pages += 1;
    }

    /// Accept one page's response; the next cursor, if any (providers.md §7.2).
    pub fn accept(&mut self, message: Message) -> Result<Option<String>, FailureClass> {
        let result = match message {
            Message::Result { result, .. } => result,
            Message::Error { .. } => return Err(FailureClass::McpUpstreamError),
            _ => return Err(FailureClass::McpProtocolError),
        };
        let Value::Object(mut result) = result else { return Err(FailureClass::McpProtocolError) };
        let Some(Value::Array(entries)) = result.remove("tools") else {
            return Err(FailureClass::McpProtocolError);
        };
        for entry in entries {
            let Value::Object(entry) = entry else { return Err(FailureClass::McpProtocolError) };
            let Some(name) = entry.get("name").and_then(Value::as_str).map(str::to_owned) else {
                return Err(FailureClass::McpProtocolError);
            };
            if self.tools.insert(name, entry).is_some() || self.tools.len() > MAX_TOOLS {
                return Err(FailureClass::McpProtocolError);
            }
        }
        match result.remove("nextCursor") {
            Some(Value::String(cursor)) => {
                if self.sent_cursors.contains(&cursor) || self.pages >= MAX_PAGES {
                    return Err(FailureClass::McpProtocolError);
                }
                Ok(Some(cursor))
            }
            // A non-string nextCursor ends the listing: pages are followed only while it is a string.
            _ => Ok(None),
        }
    }

    /// The tool facts of every mapped tool, sorted by upstream name (providers.md §7.3, §7.4).
    pub fn mapped_facts(&self, mapping: &BTreeMap<String, ToolMapping>) -> Result<Vec<Value>, FailureClass> {
        mapping.iter().map(|(name, tool)| self.fact(name, tool)).collect()
    }

    fn fact(&self, name: &str, tool: &ToolMapping) -> Result<Value, FailureClass> {
        let entry = self.tools.get(name).ok_or(FailureClass::ProviderToolMissing)?;
        let input =
            entry.get("inputSchema").and_then(Value::as_object).ok_or(FailureClass::ProviderToolMissing)?;
        if input.get("type").and_then(Value::as_str) != Some("object") {
            return Err(FailureClass::ProviderToolMissing);
        }
        if !matches!(entry.get("outputSchema"), None | Some(Value::Object(_))) {
            return Err(FailureClass::ProviderToolMissing);
        }
        let copy = |key: &str| entry.get(key).cloned().unwrap_or(Value::Null);
        let effect = match tool.effect {
            ToolEffect::Read => "read",
            ToolEffect::Write => "write",
        };
        let mut fact = Map::new();
        fact.insert("annotations".to_owned(), copy("annotations"));
        fact.insert("as".to_owned(), Value::String(tool.alias.clone()));
        fact.insert("description".to_owned(), copy("description"));
        fact.insert("effect".to_owned(), Value::String(effect.to_owned()));
        fact.insert("input_schema".to_owned(), copy("inputSchema"));
        fact.insert("name".to_owned(), Value::String(name.to_owned()));
        fact.insert("output_schema".to_owned(), copy("outputSchema"));
        fact.insert("title".to_owned(), copy("title"));
        Ok(Value::Object(fact))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::to_deterministic_string;
    use crate::providers::framing::parse_message;

    fn page(line: &str) -> Message {
        parse_message(line.as_bytes()).unwrap()
    }

    #[test]
    fn page_params_table() {
        let cases = [
            (Era::Legacy, None, None),
            (Era::Legacy, Some("c"), Some(r#"{"cursor":"c"}"#)),
            (
                Era::Modern,
                Some("c"),
                Some(
                    r#"{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"ptc-gateway","version":"v"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"cursor":"c"}"#,
                ),
            ),
        ];
        for (era, cursor, expected) in cases {
            let got = page_params(era, "v", cursor).map(|p| to_deterministic_string(&p));
            assert_eq!(got.as_deref(), expected);
        }
    }

    #[test]
    fn page_table() {
        use FailureClass::*;
        let cases: &[(&str, Result<Option<&str>, FailureClass>)] = &[
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}],"nextCursor":"p2"}}"#,
                Ok(Some("p2")),
            ),
            (r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#, Ok(None)),
            (r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":"p1"}}"#, Err(McpProtocolError)),
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"},{"name":"a"}]}}"#,
                Err(McpProtocolError),
            ),
            (r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"title":"a"}]}}"#, Err(McpProtocolError)),
            (r#"{"jsonrpc":"2.0","id":1,"result":{"tools":{}}}"#, Err(McpProtocolError)),
            (r#"{"jsonrpc":"2.0","id":1,"result":[]}"#, Err(McpProtocolError)),
            (r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m"}}"#, Err(McpUpstreamError)),
        ];
        for (line, expected) in cases {
            let mut listing = Listing::default();
            listing.sending(Some("p1"));
            let got = listing.accept(page(line));
            assert_eq!(got.as_ref().map(|c| c.as_deref()).map_err(|c| *c), *expected, "{line}");
        }
    }

    #[test]
    fn the_page_bound_is_exact() {
        let mut listing = Listing::default();
        for n in 0..MAX_PAGES {
            let cursor = (n > 0).then(|| format!("c{n}"));
            listing.sending(cursor.as_deref());
            let line =
                format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[],"nextCursor":"c{}"}}}}"#, n + 1);
            let got = listing.accept(page(&line));
            assert_eq!(got.is_ok(), n + 1 < MAX_PAGES, "page {n}");
        }
    }

    #[test]
    fn mapped_tool_table() {
        let mapping = |name: &str| {
            BTreeMap::from([(
                name.to_owned(),
                ToolMapping { alias: "x.y".into(), effect: ToolEffect::Read, description: None },
            )])
        };
        let line = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[
            {"name":"ok","inputSchema":{"type":"object"},"description":"d"},
            {"name":"noschema"},
            {"name":"array","inputSchema":{"type":"array"}},
            {"name":"badout","inputSchema":{"type":"object"},"outputSchema":true}]}}"#;
        let mut listing = Listing::default();
        listing.sending(None);
        listing.accept(page(&line.replace('\n', ""))).unwrap();
        for (name, ok) in
            [("ok", true), ("noschema", false), ("array", false), ("badout", false), ("absent", false)]
        {
            let got = listing.mapped_facts(&mapping(name));
            assert_eq!(got.is_ok(), ok, "{name}");
            if !ok {
                assert_eq!(got.unwrap_err(), FailureClass::ProviderToolMissing);
            }
        }
        let fact = to_deterministic_string(&listing.mapped_facts(&mapping("ok")).unwrap()[0]);
        assert_eq!(
            fact,
            r#"{"annotations":null,"as":"x.y","description":"d","effect":"read","input_schema":{"type":"object"},"name":"ok","output_schema":null,"title":null}"#
        );
    }
}
