//! Era negotiation rules (providers.md §6): the exact probe and `initialize` messages, the classification
//! of a probe outcome per mode, and validation of the legacy `initialize` result.
//!
//! This file is pure. Sending, waiting, spawning a fresh process for the fallback and closing are the
//! acquisition's job (`acquire.rs`).

use serde_json::{Map, Value};

use super::failure::FailureClass;
use super::framing::Message;
use crate::config::host::ProtocolEra;

/// The modern revision (providers.md §1).
pub const MODERN: &str = "2026-07-28";
/// The legacy revision the gateway offers in `initialize` (providers.md §6.3 step 1).
pub const LEGACY_OFFERED: &str = "2025-11-25";
/// Legacy revisions accepted on stdio (providers.md §6.3 step 4; `2024-11-05` is stdio only).
pub const LEGACY_ACCEPTED_STDIO: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// Legacy revisions accepted over Streamable HTTP (providers.md §6.3 step 4: `2024-11-05` predates that
/// transport).
pub const LEGACY_ACCEPTED_HTTP: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

fn string(s: &str) -> Value {
    Value::String(s.to_owned())
}

fn client_info(version: &str) -> Value {
    let mut info = Map::new();
    info.insert("name".to_owned(), string("ptc-gateway"));
    info.insert("version".to_owned(), string(version));
    Value::Object(info)
}

/// The three `_meta` keys of every modern acquisition request (providers.md §6.2, §7.2).
pub fn modern_meta(version: &str) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert("io.modelcontextprotocol/clientCapabilities".to_owned(), Value::Object(Map::new()));
    meta.insert("io.modelcontextprotocol/clientInfo".to_owned(), client_info(version));
    meta.insert("io.modelcontextprotocol/protocolVersion".to_owned(), string(MODERN));
    meta
}

/// `params` of the `server/discover` probe (providers.md §6.2).
pub fn probe_params(version: &str) -> Value {
    let mut params = Map::new();
    params.insert("_meta".to_owned(), Value::Object(modern_meta(version)));
    Value::Object(params)
}

/// `params` of the legacy `initialize` (providers.md §6.3 step 1).
pub fn initialize_params(version: &str) -> Value {
    let mut params = Map::new();
    params.insert("capabilities".to_owned(), Value::Object(Map::new()));
    params.insert("clientInfo".to_owned(), client_info(version));
    params.insert("protocolVersion".to_owned(), string(LEGACY_OFFERED));
    Value::Object(params)
}

/// What the probe decided (providers.md §6.2).
#[derive(Debug, PartialEq)]
pub enum ProbeVerdict {
    /// Modern; carries the reduced server identity.
    Modern {
        server_info: Value,
    },
    /// Fall back to `initialize` in a fresh process (auto only).
    Fallback,
    Fail(FailureClass),
}

/// What happened to the probe on the wire.
pub enum ProbeEvent {
    Answer(Message),
    /// No answer within the probe window (auto) or the acquisition deadline (2026-07-28).
    Silent,
    /// The child exited or closed stdout before answering.
    Exited,
    /// A framing-level violation (providers.md §4.2).
    Violation,
}

/// Classify a probe outcome for `mode` (`Auto` or `Modern`), the table of providers.md §6.2 for stdio.
pub fn classify_probe(mode: ProtocolEra, event: ProbeEvent) -> ProbeVerdict {
    classify_probe_for(mode, event, &LEGACY_ACCEPTED_STDIO)
}

/// [`classify_probe`] with the transport's accepted legacy revisions (a `-32022` names one,
/// providers.md §6.2).
pub fn classify_probe_for(mode: ProtocolEra, event: ProbeEvent, accepted: &[&str]) -> ProbeVerdict {
    let auto = mode == ProtocolEra::Auto;
    let legacy_signal =
        |fallback_class| if auto { ProbeVerdict::Fallback } else { ProbeVerdict::Fail(fallback_class) };
    let unsupported = FailureClass::ProviderProtocolVersionUnsupported;
    match event {
        ProbeEvent::Silent if auto => ProbeVerdict::Fallback,
        ProbeEvent::Silent => ProbeVerdict::Fail(FailureClass::ProviderAcquisitionTimeout),
        ProbeEvent::Exited => legacy_signal(FailureClass::McpTransportError),
        ProbeEvent::Violation => ProbeVerdict::Fail(FailureClass::McpProtocolError),
        ProbeEvent::Answer(Message::Error { code: -32022, data, .. }) => {
            if supports_accepted_legacy(data.as_ref(), accepted) {
                legacy_signal(unsupported)
            } else {
                ProbeVerdict::Fail(unsupported)
            }
        }
        ProbeEvent::Answer(Message::Error { code: -32020 | -32021, .. }) => {
            ProbeVerdict::Fail(FailureClass::McpProtocolError)
        }
        ProbeEvent::Answer(Message::Error { .. }) => legacy_signal(unsupported),
        ProbeEvent::Answer(Message::Result { result, .. }) => classify_discover(&result, auto),
        ProbeEvent::Answer(_) => ProbeVerdict::Fail(FailureClass::McpProtocolError),
    }
}

fn supports_accepted_legacy(data: Option<&Value>, accepted: &[&str]) -> bool {
    let supported =
        data.and_then(Value::as_object).and_then(|d| d.get("supported")).and_then(Value::as_array);
    supported.is_some_and(|versions| versions.iter().filter_map(Value::as_str).any(|v| accepted.contains(&v)))
}

fn classify_discover(result: &Value, auto: bool) -> ProbeVerdict {
    let malformed = ProbeVerdict::Fail(FailureClass::McpProtocolError);
    let Some(result) = result.as_object() else { return malformed };
    if let Some(kind) = result.get("resultType") {
        if kind.as_str() != Some("complete") {
            return malformed;
        }
    }
    let Some(versions) = result.get("supportedVersions").and_then(Value::as_array) else { return malformed };
    let Some(versions) = versions.iter().map(Value::as_str).collect::<Option<Vec<_>>>() else {
        return malformed;
    };
    if !versions.contains(&MODERN) {
        return if auto {
            ProbeVerdict::Fallback
        } else {
            ProbeVerdict::Fail(FailureClass::ProviderProtocolVersionUnsupported)
        };
    }
    if !matches!(result.get("capabilities"), Some(Value::Object(_))) {
        return malformed;
    }
    let info = result
        .get("_meta")
        .and_then(Value::as_object)
        .and_then(|meta| meta.get("io.modelcontextprotocol/serverInfo"));
    ProbeVerdict::Modern { server_info: reduce_server_info(info) }
}

/// `server_info` as a fact (providers.md §7.4): string `name`, `version` and, when present, `title`; `null`
/// when absent.
pub fn reduce_server_info(info: Option<&Value>) -> Value {
    let Some(info) = info.and_then(Value::as_object) else { return Value::Null };
    let mut reduced = Map::new();
    for key in ["name", "version", "title"] {
        if let Some(Value::String(s)) = info.get(key) {
            reduced.insert(key.to_owned(), string(s));
        }
    }
    Value::Object(reduced)
}

/// The negotiated legacy version and server identity, or the failure class (providers.md §6.3 steps 3–4), for
/// stdio.
pub fn check_initialize(message: Message) -> Result<(String, Value), FailureClass> {
    check_initialize_for(message, &LEGACY_ACCEPTED_STDIO)
}

/// [`check_initialize`] with the transport's accepted legacy revisions.
pub fn check_initialize_for(message: Message, accepted: &[&str]) -> Result<(String, Value), FailureClass> {
    let result = match message {
        Message::Result { result, .. } => result,
        Message::Error { .. } => return Err(FailureClass::ProviderProtocolError),
        _ => return Err(FailureClass::McpProtocolError),
    };
    let Some(result) = result.as_object() else { return Err(FailureClass::McpProtocolError) };
    let version =
        result.get("protocolVersion").and_then(Value::as_str).ok_or(FailureClass::McpProtocolError)?;
    if !matches!(result.get("capabilities"), Some(Value::Object(_))) {
        return Err(FailureClass::McpProtocolError);
    }
    let server_info = match result.get("serverInfo") {
        None => Value::Null,
        Some(Value::Object(info))
            if info.get("name").and_then(Value::as_str).is_some()
                && info.get("version").and_then(Value::as_str).is_some() =>
        {
            reduce_server_info(result.get("serverInfo"))
        }
        Some(_) => return Err(FailureClass::McpProtocolError),
    };
    if !accepted.contains(&version) {
        return Err(FailureClass::ProviderProtocolVersionUnsupported);
    }
    Ok((version.to_owned(), server_info))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::to_deterministic_string;
    use crate::providers::framing::parse_message;

    #[test]
    fn the_probe_and_initialize_are_byte_exact() {
        let probe = to_deterministic_string(&probe_params("1.2.3"));
        assert_eq!(
            probe,
            r#"{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"ptc-gateway","version":"1.2.3"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#
        );
        let init = to_deterministic_string(&initialize_params("1.2.3"));
        assert_eq!(
            init,
            r#"{"capabilities":{},"clientInfo":{"name":"ptc-gateway","version":"1.2.3"},"protocolVersion":"2025-11-25"}"#
        );
    }

    fn answer(line: &str) -> ProbeEvent {
        ProbeEvent::Answer(parse_message(line.as_bytes()).unwrap())
    }

    #[test]
    fn probe_table() {
        use FailureClass::*;
        use ProbeVerdict::{Fail, Fallback};
        let modern =
            r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{}}}"#;
        // (event line or special, auto verdict, 2026-07-28 verdict); `None` line = the special event.
        let rows: Vec<(&str, ProbeVerdict, ProbeVerdict)> = vec![
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25"],"capabilities":{}}}"#,
                Fallback,
                Fail(ProviderProtocolVersionUnsupported),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"m","data":{"supported":["2025-11-25"]}}}"#,
                Fallback,
                Fail(ProviderProtocolVersionUnsupported),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"m","data":{"supported":["2099-01-01"]}}}"#,
                Fail(ProviderProtocolVersionUnsupported),
                Fail(ProviderProtocolVersionUnsupported),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"m"}}"#,
                Fail(McpProtocolError),
                Fail(McpProtocolError),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"m"}}"#,
                Fail(McpProtocolError),
                Fail(McpProtocolError),
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"m"}}"#,
                Fallback,
                Fail(ProviderProtocolVersionUnsupported),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"m"}}"#,
                Fallback,
                Fail(ProviderProtocolVersionUnsupported),
            ),
            (r#"{"jsonrpc":"2.0","id":1,"result":[]}"#, Fail(McpProtocolError), Fail(McpProtocolError)),
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":[1],"capabilities":{}}}"#,
                Fail(McpProtocolError),
                Fail(McpProtocolError),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{},"resultType":"other"}}"#,
                Fail(McpProtocolError),
                Fail(McpProtocolError),
            ),
        ];
        for (line, auto, pinned) in rows {
            assert_eq!(classify_probe(ProtocolEra::Auto, answer(line)), auto, "auto {line}");
            assert_eq!(classify_probe(ProtocolEra::Modern, answer(line)), pinned, "pinned {line}");
        }
        let specials = [
            (ProbeEvent::Silent, ProbeEvent::Silent, Fallback, Fail(ProviderAcquisitionTimeout)),
            (ProbeEvent::Exited, ProbeEvent::Exited, Fallback, Fail(McpTransportError)),
            (ProbeEvent::Violation, ProbeEvent::Violation, Fail(McpProtocolError), Fail(McpProtocolError)),
        ];
        for (a, b, auto, pinned) in specials {
            assert_eq!(classify_probe(ProtocolEra::Auto, a), auto);
            assert_eq!(classify_probe(ProtocolEra::Modern, b), pinned);
        }
        for mode in [ProtocolEra::Auto, ProtocolEra::Modern] {
            assert_eq!(
                classify_probe(mode, answer(modern)),
                ProbeVerdict::Modern { server_info: Value::Null }
            );
        }
    }

    #[test]
    fn initialize_table() {
        use FailureClass::*;
        let rows: &[(&str, Result<&str, FailureClass>)] = &[
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#,
                Ok("2025-06-18"),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05","capabilities":{}}}"#,
                Ok("2024-11-05"),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-01-01","capabilities":{}}}"#,
                Err(ProviderProtocolVersionUnsupported),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"no"}}"#,
                Err(ProviderProtocolError),
            ),
            (r#"{"jsonrpc":"2.0","id":1,"result":{"capabilities":{}}}"#, Err(McpProtocolError)),
            (r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}"#, Err(McpProtocolError)),
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s"}}}"#,
                Err(McpProtocolError),
            ),
        ];
        for (line, expected) in rows {
            let got = check_initialize(parse_message(line.as_bytes()).unwrap()).map(|(v, _)| v);
            assert_eq!(got.as_deref().map_err(|c| *c), *expected, "{line}");
        }
    }
}
