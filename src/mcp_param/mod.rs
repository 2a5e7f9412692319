//! The `Mcp-Param-*` header mirror of a `tools/call`'s arguments (http-mcp.md §9.1–§9.3, §9.5), shared by the
//! three sides that must agree on it: the `/mcp` front's `Mcp-Param-*` check (http-mcp.md §8.3,
//! `mcp::params`), the gateway's own client `ptc call` (`call`) and the Streamable HTTP upstream client
//! (`providers::http`).
//!
//! Owns the header parameter type, the expected value of each parameter for given arguments, the 16,384-byte
//! bound on the expected headers, and (in [`encoding`]) the header value encoding, which the `Mcp-Name` check
//! (http-mcp.md §8.1) uses as well. It does not own the projection of a schema onto parameters
//! (`apps::header`) or the matching of received headers (`mcp::params`). Imports only `crate::json`.

pub mod encoding;

use serde_json::Value;

use crate::json::{number_f64, number_integer};
use encoding::canonical_encoding;

/// One header parameter of a tool's projection (http-mcp.md §9.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderParam {
    /// Property names from the root, e.g. `["filter", "owner"]`.
    pub path: Vec<String>,
    /// The suffix as written (`Mcp-Param-<suffix>`).
    pub suffix: String,
}

/// http-mcp.md §9.2 rule 5: the sum over expected headers of (name + canonical encoding + 4) is at most this.
pub const MAX_EXPECTED_BYTES: usize = 16_384;
/// http-mcp.md §9.2 rule 3: integral numbers mirror only up to this magnitude.
const MAX_SAFE_INTEGER: i128 = 9_007_199_254_740_991;

/// http-mcp.md §9.2 rules 1–3 for one parameter: `Ok(None)` when absent, `Ok(Some(canonical))` when present,
/// and `Err(())` when the value cannot be mirrored (the gateway refuses the call with `-32020`).
pub(crate) fn expected(arguments: &Value, path: &[String]) -> Result<Option<String>, ()> {
    let mut at = arguments;
    for name in path {
        match at.as_object().and_then(|m| m.get(name)) {
            Some(next) => at = next,
            None => return Ok(None),
        }
    }
    match at {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        Value::Bool(b) => Ok(Some(b.to_string())),
        Value::Number(n) => match (number_integer(n), number_f64(n)) {
            (Some(i), _) if i.abs() <= MAX_SAFE_INTEGER => Ok(Some(i.to_string())),
            (None, f) if f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER as f64 => {
                // Integral and within ±(2^53 − 1): exact as an i64; `-0.0` becomes `0`.
                Ok(Some((f as i64).to_string()))
            }
            _ => Err(()),
        },
        _ => Err(()),
    }
}

/// The client side of http-mcp.md §9.2 (`ptc call`, lifecycle.md §1.2; the upstream client,
/// providers.md §5.2): the `(Mcp-Param-<suffix>, canonical encoding)` lines a call of a tool with `params`
/// must carry for `arguments`, in projection order. `None` when an argument cannot be mirrored or the lines
/// exceed the 16,384-byte bound (the gateway would refuse the call with `-32020`).
pub fn expected_headers(params: &[HeaderParam], arguments: &Value) -> Option<Vec<(String, String)>> {
    let mut lines = Vec::with_capacity(params.len());
    let mut total = 0usize;
    for p in params {
        if let Some(canonical) = expected(arguments, &p.path).ok()? {
            let name = format!("Mcp-Param-{}", p.suffix);
            let encoding = canonical_encoding(&canonical);
            total = total.saturating_add(name.len() + encoding.len() + 4);
            lines.push((name, encoding));
        }
    }
    (total <= MAX_EXPECTED_BYTES).then_some(lines)
}

#[cfg(test)]
mod props;
