//! Generated inputs for the PCC envelope (pcc.md §5.2, §6, §12, §13; issue 18, docs/reliability.md): the
//! protobuf frames of `CreateMcpTransportRequest` (`Connect` and `request_body`), mutated byte by byte, and
//! `request_body` texts drawn from the JSON-RPC request, notification and response shapes, then mutated.
//!
//! Properties: no panic; a frame that decodes re-encodes to a frame decoding to the same message, and its
//! `Connect` trace id is taken only when it is 32 lowercase hex digits, not all zero (pcc.md §12); every
//! `request_body` is classified or refused with the closed error of pcc.md §5.2, consistently with the
//! strict decoder (parse error exactly when it refuses, batch exactly for an array), and an id is echoed
//! only when the body carried that valid id.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use prost::Message as _;

use super::*;
use crate::pcc::proto::served::create_mcp_transport_request::{Connect, Request};
use crate::pcc::proto::served::{CreateMcpTransportRequest, TraceContext};
use crate::providers::trace::TraceId;
use crate::support::prop_support::{check, mutated};

fn frame() -> impl Strategy<Value = Vec<u8>> {
    let text = prop_oneof!["[ -~]{0,40}", "[0-9a-f]{32}", Just("0".repeat(32)), "[0-9a-fA-F]{31,33}"];
    let connect = (text.clone(), text.clone(), proptest::option::of(text), "[a-z0-9.]{0,8}").prop_map(
        |(server_id, request_id, trace, version)| {
            Request::Connect(Connect {
                server_id,
                request_id,
                trace_context: trace.map(|trace_id| TraceContext { trace_id, ..Default::default() }),
                tenant_info: None,
                server_cloudos_version: version,
            })
        },
    );
    let body = vec(any::<u8>(), 0..48).prop_map(Request::RequestBody);
    let request = prop_oneof![connect, body]
        .prop_map(|r| CreateMcpTransportRequest { request: Some(r) }.encode_to_vec());
    mutated(prop_oneof![4 => request, 1 => vec(any::<u8>(), 0..48)])
}

#[test]
fn prop_pcc_frames() {
    check("pcc_frames", 4096, frame(), |bytes| {
        let Ok(message) = CreateMcpTransportRequest::decode(bytes.as_slice()) else { return Ok(()) };
        let again = CreateMcpTransportRequest::decode(message.encode_to_vec().as_slice());
        prop_assert_eq!(again.as_ref(), Ok(&message));
        if let Some(Request::Connect(connect)) = &message.request {
            let given = connect.trace_context.as_ref().map(|t| t.trace_id.as_str());
            let valid = given.is_some_and(|t| {
                t.len() == 32
                    && t.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
                    && t.bytes().any(|b| b != b'0')
            });
            prop_assert_eq!(given.and_then(TraceId::parse).is_some(), valid);
            if valid {
                prop_assert_eq!(Some(TraceId::from_connect(given).hex()), given.map(str::to_owned));
            }
        }
        Ok(())
    });
}

fn request_body() -> impl Strategy<Value = Vec<u8>> {
    let id = select(vec!["1", "\"r-1\"", "0", "null", "1.5", "\"\"", "9007199254740992", "{}"]);
    let method = select(vec!["\"initialize\"", "\"tools/call\"", "\"notifications/initialized\"", "5"]);
    let shape = prop_oneof![
        (id.clone(), method.clone())
            .prop_map(|(i, m)| format!(r#"{{"jsonrpc":"2.0","id":{i},"method":{m},"params":{{}}}}"#)),
        method.prop_map(|m| format!(r#"{{"jsonrpc":"2.0","method":{m}}}"#)),
        (id.clone(), select(vec![r#""result":{}"#, r#""error":{"code":1}"#, r#""result":1,"error":{}"#]))
            .prop_map(|(i, r)| format!(r#"{{"jsonrpc":"2.0","id":{i},{r}}}"#)),
        id.prop_map(|i| format!(r#"[{{"jsonrpc":"2.0","id":{i},"method":"x"}}]"#)),
    ];
    mutated(shape.prop_map(String::into_bytes))
}

#[test]
fn prop_pcc_request_body() {
    check("pcc_request_body", 4096, request_body(), |body| {
        let decoded = decode(&body, Limits::REQUEST);
        match classify(&body) {
            Ok(inbound) => {
                let Ok(Value::Object(object)) = &decoded else {
                    return Err(TestCaseError::fail("accepted a non-object"));
                };
                prop_assert_eq!(object.get("jsonrpc"), Some(&Value::from("2.0")));
                if let Inbound::Request { id, method, .. } = &inbound {
                    prop_assert_eq!(object.get("id").and_then(RequestId::from_value), Some(id.clone()));
                    prop_assert_eq!(object.get("method").and_then(Value::as_str), Some(method.as_str()));
                }
            }
            Err((error, id)) => {
                let expected = match &decoded {
                    Err(_) => Some(PccError::ParseError),
                    Ok(Value::Array(_)) => Some(PccError::BatchUnsupported),
                    Ok(_) => None,
                };
                match expected {
                    Some(kind) => prop_assert_eq!((error, id.is_none()), (kind, true)),
                    None => {
                        prop_assert_eq!(error, PccError::InvalidEnvelope);
                        if let (Some(id), Ok(value)) = (&id, &decoded) {
                            prop_assert_eq!(
                                value.get("id").and_then(RequestId::from_value),
                                Some(id.clone())
                            );
                        }
                    }
                }
                let answer = decode(error.body(id.as_ref()).as_bytes(), Limits::REQUEST);
                prop_assert!(answer.is_ok(), "the answer is strict JSON");
            }
        }
        Ok(())
    });
}
