//! Stage 5i (http-mcp.md §10.3): the static `tools/list` result, encoded once at startup, and its bounds.
//!
//! Owns the shape of a listing entry (exactly `name`, `title`, `description`, `inputSchema`,
//! `outputSchema`, `annotations.readOnlyHint`), the result envelope around the `tools` array, and the
//! 4,194,304-byte bounds on the encoded array and on the worst-case response. Does not own the JSON-RPC
//! response around the result at request time (the MCP front writes the id it received).

use serde_json::{Map, Value};

use super::error::{AppDetail, AppError, AppErrorKind};
use crate::config::manifest::Effect;
use crate::json::to_deterministic_string;

/// http-mcp.md §10.3: the encoded `tools` array and the worst-case response are each at most this.
pub const MAX_LISTING_BYTES: usize = 4_194_304;
/// The server name in `_meta` (http-mcp.md §10.2).
pub const SERVER_NAME: &str = "ptc-gateway";
/// The `_meta` member every result carries (http-mcp.md §10.2).
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// `{"id":` + `"<256 U+0000>"` + `,"jsonrpc":"2.0","result":` + result + `}`: the worst case of
/// http-mcp.md §10.3 adds this many bytes to the encoded result. The id contributes 1,538 bytes (256
/// six-byte `\u0000` escapes and two quotes).
pub const WORST_CASE_ENVELOPE_BYTES: usize = 6 + 1_538 + 26 + 1;

/// What one tool contributes to the listing.
pub struct ListingTool<'a> {
    pub name: &'a str,
    pub title: &'a str,
    pub description: &'a str,
    pub input_schema: &'a Value,
    pub output_schema: &'a Value,
    pub effect: Effect,
}

/// The encoded listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Catalog {
    tools: String,
    result: String,
}

impl Catalog {
    /// `DJ` of the `tools` array.
    pub fn tools_json(&self) -> &str {
        &self.tools
    }

    /// `DJ` of the whole `tools/list` result object, ready to be placed after `"result":`.
    pub fn result_json(&self) -> &str {
        &self.result
    }
}

/// The `_meta` object of every result (http-mcp.md §10.2), with this package's version.
pub fn server_meta() -> Value {
    let mut info = Map::new();
    info.insert("name".into(), Value::from(SERVER_NAME));
    info.insert("version".into(), Value::from(env!("CARGO_PKG_VERSION")));
    let mut meta = Map::new();
    meta.insert(SERVER_INFO_KEY.into(), Value::Object(info));
    Value::Object(meta)
}

/// One entry, exactly the members of http-mcp.md §10.3.
pub fn entry(tool: &ListingTool<'_>) -> Value {
    let mut annotations = Map::new();
    annotations.insert("readOnlyHint".into(), Value::Bool(tool.effect == Effect::Read));
    let mut e = Map::new();
    e.insert("annotations".into(), Value::Object(annotations));
    e.insert("description".into(), Value::from(tool.description));
    e.insert("inputSchema".into(), tool.input_schema.clone());
    e.insert("name".into(), Value::from(tool.name));
    e.insert("outputSchema".into(), tool.output_schema.clone());
    e.insert("title".into(), Value::from(tool.title));
    Value::Object(e)
}

/// The bound that refused the listing, with the size it measured (lifecycle.md §1.5).
fn too_large<T>(what: &'static str, bytes: usize) -> Result<T, AppError> {
    let detail = AppDetail::Size { what, bytes, limit: MAX_LISTING_BYTES };
    Err(AppError::with_detail(AppErrorKind::CatalogTooLarge, detail))
}

/// Builds and bounds the listing. `tools` must already be in ascending byte order of their names (the
/// gateway document's normalised order).
pub fn build(tools: &[ListingTool<'_>]) -> Result<Catalog, AppError> {
    let array = Value::Array(tools.iter().map(entry).collect());
    let encoded_tools = to_deterministic_string(&array);
    if encoded_tools.len() > MAX_LISTING_BYTES {
        return too_large("the encoded tools array", encoded_tools.len());
    }
    let mut result = Map::new();
    result.insert("_meta".into(), server_meta());
    result.insert("cacheScope".into(), Value::from("private"));
    result.insert("resultType".into(), Value::from("complete"));
    result.insert("tools".into(), array);
    result.insert("ttlMs".into(), Value::from(0));
    let encoded_result = to_deterministic_string(&Value::Object(result));
    let worst_case = encoded_result.len().saturating_add(WORST_CASE_ENVELOPE_BYTES);
    if worst_case > MAX_LISTING_BYTES {
        return too_large("the worst-case tools/list response", worst_case);
    }
    Ok(Catalog { tools: encoded_tools, result: encoded_result })
}
