//! The `tools/call` message (providers.md §8.1 step 6): its exact bytes per era, and the direct writer
//! (`call_line`) against the construction it replaced (`call_params` in a message map, encoded by `DJ`,
//! pins.md §2) for every shape: each era, each id form, names, versions, traceparents and arguments with
//! escapes and non-ASCII text.

use proptest::prelude::*;
use proptest::sample::select;

use super::*;
use crate::json::decode::props::json_text;
use crate::json::to_deterministic_string;
use crate::providers::outgoing::message;
use crate::support::prop_support::check;

const TP: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// The construction the direct writer replaced.
fn old_line(id: u64, era: Era, version: &str, name: &str, arguments: &Value, traceparent: &str) -> Vec<u8> {
    message(Some(id), "tools/call", Some(call_params(era, version, name, arguments.clone(), traceparent)))
}

#[test]
fn call_messages_are_byte_exact() {
    let args = Value::Object(Map::new());
    let cases = [
        (
            Era::Legacy,
            r#"{"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},"arguments":{},"name":"echo"}"#,
        ),
        (
            Era::Modern,
            r#"{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"ptc-gateway","version":"v"},"io.modelcontextprotocol/protocolVersion":"2026-07-28","traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},"arguments":{},"name":"echo"}"#,
        ),
    ];
    for (era, expected) in cases {
        assert_eq!(to_deterministic_string(&call_params(era, "v", "echo", args.clone(), TP)), expected);
        let line = call_line(7, era, "v", "echo", &args, TP);
        let expected_line =
            format!(r#"{{"id":7,"jsonrpc":"2.0","method":"tools/call","params":{expected}}}"#);
        assert_eq!(String::from_utf8(line), Ok(expected_line));
    }
}

#[test]
fn the_direct_line_is_the_old_line_for_every_shape() {
    let ids = [0, 1, 9, 10, 12_345, u64::from(u32::MAX), i64::MAX as u64, u64::MAX];
    let names = ["echo", "", "a\"b\\c", "line\nbreak\u{1}", "naïve-工具", "tab\there"];
    let versions = ["0.1.0", "", "v\"\\\u{7f}", "ü"];
    let traceparents = [TP, "", "00-\"x\"-\u{0}"];
    let arguments = [
        "{}",
        r#"{"text":"hi"}"#,
        r#"{"b":1,"a":[1,2.5,-0.0,1e300,null,true,false],"A":{"z":{},"_":[]}}"#,
        r#"{"é":"\u0000\u001f\"\\/","e":"😀","\u007f":-9223372036854775808,"big":18446744073709551615}"#,
    ];
    for id in ids {
        for era in [Era::Legacy, Era::Modern] {
            for name in names {
                for version in versions {
                    for traceparent in traceparents {
                        for text in arguments {
                            let Ok(args) = serde_json::from_str::<Value>(text) else {
                                panic!("fixture {text}");
                            };
                            assert_eq!(
                                call_line(id, era, version, name, &args, traceparent),
                                old_line(id, era, version, name, &args, traceparent),
                                "{id} {era:?} {name:?} {version:?} {traceparent:?} {text}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn prop_the_direct_call_line_equals_the_old_construction() {
    let strategy = (
        any::<u64>(),
        select(vec![Era::Legacy, Era::Modern]),
        any::<String>(),
        any::<String>(),
        any::<String>(),
        json_text(),
    );
    check("provider_call_line", 256, strategy, |(id, era, version, name, traceparent, text)| {
        // The arguments are an object on this path (`call_reserved` refuses any other value first);
        // any decoded value is wrapped as a member so that every generated shape is reached.
        let inner = serde_json::from_str::<Value>(&text).unwrap_or(Value::Null);
        let mut members = Map::new();
        members.insert(name.clone(), inner);
        let args = Value::Object(members);
        prop_assert_eq!(
            call_line(id, era, &version, &name, &args, &traceparent),
            old_line(id, era, &version, &name, &args, &traceparent)
        );
        Ok(())
    });
}
