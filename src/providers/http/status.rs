//! What an HTTP status and `Content-Type` mean for one upstream request (providers.md §5.3) and for the era
//! probe (providers.md §6.2, the HTTP rows).
//!
//! This file is pure: it maps a status (with whether the request carried `Mcp-Session-Id`) to either a body
//! to read or a failure class with dispatch `true`, and a probe status to a verdict. Reading bodies is
//! `exchange.rs`; the JSON answers of the probe go through `negotiate::classify_probe_for`.

use hyper::header::CONTENT_TYPE;
use hyper::HeaderMap;

use super::super::failure::{CallFailure, Dispatch, FailureClass};
use super::super::framing::Message;
use super::super::negotiate::{classify_probe_for, ProbeEvent, ProbeVerdict, LEGACY_ACCEPTED_HTTP};
use crate::config::host::ProtocolEra;

/// How to read a response to a request (providers.md §5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body {
    Json,
    EventStream,
}

/// The meaning of a status for a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Meaning {
    Read(Body),
    Fail(FailureClass),
    /// 404 to a request that carried the legacy session id: the server forgot it (providers.md §5.4).
    SessionLost,
}

/// The media type of `Content-Type`, lowercased, parameters dropped (providers.md §5.3 "parameters allowed").
fn media_type(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(CONTENT_TYPE)?.to_str().ok()?;
    let essence = value.split(';').next().unwrap_or_default().trim();
    Some(essence.to_ascii_lowercase())
}

/// providers.md §5.3 for a request (not a notification).
pub fn for_request(status: u16, headers: &HeaderMap, carried_session: bool) -> Meaning {
    match status {
        200 => match media_type(headers).as_deref() {
            Some("application/json") => Meaning::Read(Body::Json),
            Some("text/event-stream") => Meaning::Read(Body::EventStream),
            _ => Meaning::Fail(FailureClass::McpProtocolError),
        },
        // 202 (and any other 2xx) carries no response to a request.
        201..=299 => Meaning::Fail(FailureClass::McpProtocolError),
        401 | 403 => Meaning::Fail(FailureClass::McpAuthenticationFailed),
        404 if carried_session => Meaning::SessionLost,
        400..=499 => Meaning::Fail(FailureClass::McpUpstreamError),
        // 3xx is never followed (providers.md §5.1); 5xx and anything unassigned are transport failures.
        _ => Meaning::Fail(FailureClass::McpTransportError),
    }
}

/// The failure a meaning carries (dispatch `true`: a status was received).
pub fn failure(meaning: Meaning) -> Option<CallFailure> {
    match meaning {
        Meaning::Read(_) => None,
        Meaning::Fail(class) => Some(CallFailure::new(class, Dispatch::True)),
        Meaning::SessionLost => Some(CallFailure::new(FailureClass::McpTransportError, Dispatch::True)),
    }
}

/// A notification is accepted by any 2xx (providers.md §5.3).
pub fn notification_accepted(status: u16) -> bool {
    (200..=299).contains(&status)
}

/// providers.md §6.2 for a non-200 probe status; `body` is the JSON-RPC message of a 400/404/405 body, if it
/// is one.
pub fn probe_status(mode: ProtocolEra, status: u16, body: Option<Message>) -> ProbeVerdict {
    let auto = mode == ProtocolEra::Auto;
    let legacy_signal = |class| if auto { ProbeVerdict::Fallback } else { ProbeVerdict::Fail(class) };
    let unsupported = FailureClass::ProviderProtocolVersionUnsupported;
    match status {
        401 | 403 => ProbeVerdict::Fail(FailureClass::McpAuthenticationFailed),
        400 | 404 | 405 => match body {
            // A modern error in the body decides as it would in a 200 answer.
            Some(message @ Message::Error { code: -32022..=-32020, .. }) => {
                classify_probe_for(mode, ProbeEvent::Answer(message), &LEGACY_ACCEPTED_HTTP)
            }
            _ => legacy_signal(unsupported),
        },
        400..=499 => legacy_signal(unsupported),
        500..=599 => legacy_signal(FailureClass::McpTransportError),
        // 3xx (never followed), a 2xx other than a readable 200, and anything unassigned.
        _ if (200..=299).contains(&status) => ProbeVerdict::Fail(FailureClass::McpProtocolError),
        _ => ProbeVerdict::Fail(FailureClass::McpTransportError),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::framing::parse_message;
    use hyper::header::HeaderValue;
    use FailureClass::*;

    fn typed(content_type: Option<&str>) -> HeaderMap {
        let mut map = HeaderMap::new();
        if let Some(ct) = content_type {
            map.insert(CONTENT_TYPE, HeaderValue::from_str(ct).unwrap());
        }
        map
    }

    #[test]
    fn request_status_table() {
        let rows: &[(u16, Option<&str>, bool, Meaning)] = &[
            (200, Some("application/json"), false, Meaning::Read(Body::Json)),
            (200, Some("Application/JSON; charset=utf-8"), false, Meaning::Read(Body::Json)),
            (200, Some("text/event-stream"), false, Meaning::Read(Body::EventStream)),
            (200, Some("text/plain"), false, Meaning::Fail(McpProtocolError)),
            (200, None, false, Meaning::Fail(McpProtocolError)),
            (202, None, false, Meaning::Fail(McpProtocolError)),
            (401, None, false, Meaning::Fail(McpAuthenticationFailed)),
            (403, None, true, Meaning::Fail(McpAuthenticationFailed)),
            (404, None, true, Meaning::SessionLost),
            (404, None, false, Meaning::Fail(McpUpstreamError)),
            (400, None, true, Meaning::Fail(McpUpstreamError)),
            (429, None, false, Meaning::Fail(McpUpstreamError)),
            (500, None, false, Meaning::Fail(McpTransportError)),
            (503, None, false, Meaning::Fail(McpTransportError)),
            (302, None, false, Meaning::Fail(McpTransportError)),
            (307, None, false, Meaning::Fail(McpTransportError)),
        ];
        for (status, ct, carried, meaning) in rows {
            assert_eq!(for_request(*status, &typed(*ct), *carried), *meaning, "{status} {ct:?}");
        }
        assert_eq!(failure(Meaning::SessionLost), Some(CallFailure::new(McpTransportError, Dispatch::True)));
        assert!(notification_accepted(202) && notification_accepted(200) && !notification_accepted(404));
    }

    #[test]
    fn probe_status_table() {
        use ProbeVerdict::{Fail, Fallback};
        let err = |code: i32| {
            parse_message(
                format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":{code},"message":"m"}}}}"#).as_bytes(),
            )
            .ok()
        };
        let legacy32022 = || {
            parse_message(
                br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"m","data":{"supported":["2025-06-18"]}}}"#,
            )
            .ok()
        };
        // (status, body, auto, 2026-07-28) — providers.md §6.2 HTTP rows and F36.
        let rows: Vec<(u16, Option<Message>, ProbeVerdict, ProbeVerdict)> = vec![
            (400, None, Fallback, Fail(ProviderProtocolVersionUnsupported)),
            (404, None, Fallback, Fail(ProviderProtocolVersionUnsupported)),
            (405, err(-32601), Fallback, Fail(ProviderProtocolVersionUnsupported)),
            (400, err(-32020), Fail(McpProtocolError), Fail(McpProtocolError)),
            (
                404,
                err(-32022),
                Fail(ProviderProtocolVersionUnsupported),
                Fail(ProviderProtocolVersionUnsupported),
            ),
            (400, legacy32022(), Fallback, Fail(ProviderProtocolVersionUnsupported)),
            (422, None, Fallback, Fail(ProviderProtocolVersionUnsupported)),
            (503, None, Fallback, Fail(McpTransportError)),
            (500, None, Fallback, Fail(McpTransportError)),
            (302, None, Fail(McpTransportError), Fail(McpTransportError)),
            (307, None, Fail(McpTransportError), Fail(McpTransportError)),
            (401, None, Fail(McpAuthenticationFailed), Fail(McpAuthenticationFailed)),
            (403, None, Fail(McpAuthenticationFailed), Fail(McpAuthenticationFailed)),
            (202, None, Fail(McpProtocolError), Fail(McpProtocolError)),
        ];
        for (status, body, auto, pinned) in rows {
            assert_eq!(probe_status(ProtocolEra::Auto, status, body.clone()), auto, "auto {status}");
            assert_eq!(probe_status(ProtocolEra::Modern, status, body), pinned, "pinned {status}");
        }
    }
}
