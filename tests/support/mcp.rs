//! The `/mcp` side of the harness: the fixture of http-mcp.md §12.1, the one builder of the tests' MCP
//! requests (the JSON-RPC envelope with its `_meta`, and the `POST /mcp` head with every header http-mcp.md
//! §5 requires, as in the baseline requests of §12.2), and a raw client that reads one response (status,
//! headers, body) and tells whether the server closed the connection after it.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::json;

use super::{content_pin, read_response, Deployment, Response, TOKEN};

/// The allowed origin of the fixture.
pub const ORIGIN: &str = "http://127.0.0.1:3000";

/// `echo`'s input and result contract (§12.1).
pub const ECHO_CONTRACT: &str =
    r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#;
/// `weather`'s input contract (§12.1).
pub const WEATHER_INPUT: &str = r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"days":{"type":"integer","x-mcp-header":"Days"},"metric":{"type":"boolean","x-mcp-header":"Metric"}},"required":["region"]}"#;
/// `weather`'s result contract (§12.1).
pub const WEATHER_RESULT: &str =
    r#"{"type":"object","properties":{"region":{"type":"string"}},"required":["region"]}"#;
const WEATHER_LUAU: &str = "local M = {}\n\nfunction M.run(input)\n  if type(input.region) == \"string\" then\n    return { region = input.region }\n  end\n  return { region = \"\" }\nend\n\nreturn M\n";

/// The protocol revision of every request the tests build (http-mcp.md §1): the `MCP-Protocol-Version`
/// header and the revision in `_meta`.
pub const PROTOCOL_VERSION: &str = "2026-07-28";

/// The `_meta` member of a request's `params` (http-mcp.md §5): the revision and no client capabilities.
/// A macro, so that the §12.2 bodies below are constants built from it.
macro_rules! meta {
    () => {
        r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#
    };
}

/// The `_meta` member of every request body (see `meta!`).
pub const META: &str = meta!();
/// The body of B-list (§12.2), 170 bytes.
pub const B_LIST_BODY: &str =
    concat!(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"#, meta!(), "}}");
/// The body of B-call (§12.2).
pub const B_CALL_BODY: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"#,
    meta!(),
    "}}"
);

/// The body of a `tools/call` of `tool` as `id` (JSON text: `1`, `"call-9"`) with `arguments` (JSON text).
pub fn call_body(id: &str, tool: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments},{META}}}}}"#
    )
}

/// The body of a `tools/list` (or another method whose params are only `_meta`) as `id`.
pub fn method_body(id: &str, method: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{META}}}}}"#)
}

/// The deployment of §12.1 on `address` (`127.0.0.1` or `::1`): `echo` and `weather`, admission 2/1/1/0,
/// the allowed origin, the bearer in a file (so in-process tests need no environment).
pub fn fixture(address: &str) -> Deployment {
    let mut d = Deployment::baseline();
    if address == "::1" {
        d.port = super::free_port("::1");
    }
    d.gateway["listen"] =
        json!({"address": address, "port": d.port, "path": "/mcp", "allowed_origins": [ORIGIN]});
    d.gateway["admission"] = json!({"max_inflight_requests": 2, "max_concurrent_runs": 1,
        "max_active_provider_calls": 1, "max_waiting_provider_calls": 0});
    d.host["credentials"]["gateway"] = json!({"file": "token"});
    d.write_file("token", TOKEN);
    d.write_file("echo/schema.json", ECHO_CONTRACT);
    let weather = json!({
        "version": 1,
        "effect": "read",
        "contracts": {"input_schema": {"path": "input.json"}, "result_schema": {"path": "result.json"}},
        "workflow": {"components": [{"id": "app", "path": "app.luau"}], "entry": "app.run"}
    });
    d.write_file("weather/ptc.json", &serde_json::to_string_pretty(&weather).expect("json"));
    d.write_file("weather/input.json", WEATHER_INPUT);
    d.write_file("weather/result.json", WEATHER_RESULT);
    d.write_file("weather/app.luau", WEATHER_LUAU);
    let echo_pin = content_pin::of(&d.path("echo/ptc.json"));
    let weather_pin = content_pin::of(&d.path("weather/ptc.json"));
    d.gateway["tools"][0]["expected_application_content_digest"] = json!(echo_pin);
    d.gateway["tools"].as_array_mut().expect("tools").push(
        json!({"name": "weather", "title": "Weather", "description": "Report the weather of a region.",
            "application": {"manifest": "weather/ptc.json"},
            "expected_application_content_digest": weather_pin,
            "installation_config_pins": {}, "provider_snapshot_pins": {}}),
    );
    d.write_documents();
    d
}

/// A raw request: exact header lines in order, an exact body, `Content-Length` computed unless set.
#[derive(Clone, Debug)]
pub struct Req {
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
    /// Write no `Content-Length` (a chunked or bodiless request sets its own framing).
    pub no_length: bool,
}

impl Req {
    /// `POST /mcp` of the JSON-RPC `method` (with `Mcp-Name: name` for a `tools/call`) carrying `body`, for
    /// the authority `host`: the fixture's bearer and every header http-mcp.md §5 requires, in the order of
    /// the B-requests of §12.2; `Content-Length` follows them.
    pub fn post(host: &str, method: &str, name: Option<&str>, body: &str) -> Req {
        let h = |n: &str, v: &str| (n.to_string(), v.as_bytes().to_vec());
        let mut headers = vec![
            h("Host", host),
            h("Authorization", &format!("Bearer {TOKEN}")),
            h("Content-Type", "application/json"),
            h("Accept", "application/json, text/event-stream"),
            h("MCP-Protocol-Version", PROTOCOL_VERSION),
            h("Mcp-Method", method),
        ];
        if let Some(name) = name {
            headers.push(h("Mcp-Name", name));
        }
        Req {
            method: "POST".into(),
            target: "/mcp".into(),
            headers,
            body: body.as_bytes().to_vec(),
            no_length: false,
        }
    }

    /// B-list of §12.2 for the authority `host`.
    pub fn b_list(host: &str) -> Req {
        Req::post(host, "tools/list", None, B_LIST_BODY)
    }

    /// B-call of §12.2.
    pub fn b_call(host: &str) -> Req {
        Req::post(host, "tools/call", Some("echo"), B_CALL_BODY)
    }

    /// A `tools/call` of `tool` as `id` (JSON text) with `arguments` (JSON text) to the gateway at `addr`.
    pub fn tools_call(addr: SocketAddr, tool: &str, id: &str, arguments: &str) -> Req {
        Req::post(&super::authority(addr), "tools/call", Some(tool), &call_body(id, tool, arguments))
    }

    /// A `tools/list` as `id` 1 to the gateway at `addr`.
    pub fn tools_list(addr: SocketAddr) -> Req {
        Req::post(&super::authority(addr), "tools/list", None, B_LIST_BODY)
    }

    /// A `server/discover` as `id` 1 for the authority `host`.
    pub fn discover(host: &str) -> Req {
        Req::post(host, "server/discover", None, &method_body("1", "server/discover"))
    }

    /// B-weather of §12.2 with `arguments` (JSON text) and the given param lines.
    pub fn b_weather(host: &str, arguments: &str, params: &[(&str, &[u8])]) -> Req {
        let body = B_CALL_BODY
            .replace(r#""name":"echo""#, r#""name":"weather""#)
            .replace(r#"{"text":"hi"}"#, arguments);
        let mut req = Req::b_call(host).set("Mcp-Name", "weather").body(&body);
        for (name, value) in params {
            req.headers.push((name.to_string(), value.to_vec()));
        }
        req
    }

    /// Replaces every line named `name` (any case) by one line, at the first one's place.
    pub fn set(self, name: &str, value: &str) -> Req {
        self.set_bytes(name, value.as_bytes())
    }

    pub fn set_bytes(mut self, name: &str, value: &[u8]) -> Req {
        let at = self.headers.iter().position(|(n, _)| n.eq_ignore_ascii_case(name));
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        let line = (name.to_string(), value.to_vec());
        match at {
            Some(i) => self.headers.insert(i, line),
            None => self.headers.push(line),
        }
        self
    }

    /// Adds one more line.
    pub fn add(mut self, name: &str, value: &str) -> Req {
        self.headers.push((name.to_string(), value.as_bytes().to_vec()));
        self
    }

    /// Removes every line named `name` (any case).
    pub fn remove(mut self, name: &str) -> Req {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self
    }

    /// Renames the lines named `from` to exactly `to` (header name case rows).
    pub fn rename(mut self, from: &str, to: &str) -> Req {
        for (n, _) in &mut self.headers {
            if n.eq_ignore_ascii_case(from) {
                *n = to.to_string();
            }
        }
        self
    }

    pub fn body(mut self, body: &str) -> Req {
        self.body = body.as_bytes().to_vec();
        self
    }

    pub fn body_bytes(mut self, body: Vec<u8>) -> Req {
        self.body = body;
        self
    }

    /// Replaces `from` by `to` in the body (it must occur).
    pub fn edit(self, from: &str, to: &str) -> Req {
        let text = String::from_utf8(self.body.clone()).expect("utf-8 body");
        assert!(text.contains(from), "the body has no {from:?}");
        self.body(&text.replacen(from, to, 1))
    }

    pub fn method(mut self, method: &str) -> Req {
        self.method = method.into();
        self
    }

    pub fn target(mut self, target: &str) -> Req {
        self.target = target.into();
        self
    }

    /// The head bytes, including `Content-Length` unless [`Req::no_length`].
    pub fn head(&self) -> Vec<u8> {
        let mut out = format!("{} {} HTTP/1.1\r\n", self.method, self.target).into_bytes();
        for (n, v) in &self.headers {
            out.extend_from_slice(n.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(v);
            out.extend_from_slice(b"\r\n");
        }
        if !self.no_length {
            out.extend_from_slice(format!("Content-Length: {}\r\n", self.body.len()).as_bytes());
        }
        out.extend_from_slice(b"\r\n");
        out
    }

    pub fn bytes(&self) -> Vec<u8> {
        let mut out = self.head();
        out.extend_from_slice(&self.body);
        out
    }
}

/// One exchange on a fresh connection.
pub struct Exchange {
    pub response: Response,
    /// The server closed the connection after the response (read end of stream within 3 s).
    pub closed: bool,
}

/// Connects to `addr` with generous timeouts.
pub fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    stream
}

/// Whether the server ends the connection within `within` (end of stream, or a reset after a close).
pub fn closes(stream: &mut TcpStream, within: Duration) -> bool {
    stream.set_read_timeout(Some(within)).expect("timeout");
    let mut buf = [0u8; 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            // Bytes after the response would be a protocol error of the server; keep reading to the end.
            Ok(_) => continue,
            Err(e) => return e.kind() == std::io::ErrorKind::ConnectionReset,
        }
    }
}

/// Sends `bytes`, reads one response and whether the connection closes after it.
pub fn exchange(addr: SocketAddr, bytes: &[u8]) -> Exchange {
    let mut stream = connect(addr);
    stream.write_all(bytes).expect("write");
    let response = read_response(&mut stream, false).expect("response");
    let closed = closes(&mut stream, Duration::from_secs(3));
    Exchange { response, closed }
}

/// Sends `bytes` then half-closes; returns everything the server wrote before it closed.
pub fn send_and_shutdown(stream: &mut TcpStream, bytes: &[u8]) -> Vec<u8> {
    stream.write_all(bytes).expect("write");
    stream.shutdown(Shutdown::Write).expect("shutdown");
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    out
}

/// `{"id":<id>,"jsonrpc":"2.0","result":<result>}`.
pub fn result(id: &str, result: &str) -> String {
    format!(r#"{{"id":{id},"jsonrpc":"2.0","result":{result}}}"#)
}

/// A JSON-RPC error body of http-mcp.md §11 (no `data`).
pub fn rpc_error(code: i64, id: Option<&str>) -> String {
    let message = match code {
        -32700 => "Parse error",
        -32600 => "Invalid Request",
        -32602 => "Invalid params",
        -32020 => "Header mismatch",
        -32601 => "Method not found",
        -31998 => "Server unavailable",
        -32603 => "Internal error",
        other => panic!("no message for {other}"),
    };
    match id {
        Some(id) => {
            format!(r#"{{"error":{{"code":{code},"message":"{message}"}},"id":{id},"jsonrpc":"2.0"}}"#)
        }
        None => format!(r#"{{"error":{{"code":{code},"message":"{message}"}},"jsonrpc":"2.0"}}"#),
    }
}

/// The `tools/list` result of the fixture (http-mcp.md §10.3), written out independently of the gateway:
/// the contracts normalised with `additionalProperties: false` on every object schema (execution.md §11.2).
pub fn listing_result() -> String {
    let meta = format!(
        r#"{{"io.modelcontextprotocol/serverInfo":{{"name":"ptc-gateway","version":"{}"}}}}"#,
        env!("CARGO_PKG_VERSION")
    );
    let echo_schema = r#"{"additionalProperties":false,"properties":{"text":{"type":"string"}},"required":["text"],"type":"object"}"#;
    let weather_in = r#"{"additionalProperties":false,"properties":{"days":{"type":"integer","x-mcp-header":"Days"},"metric":{"type":"boolean","x-mcp-header":"Metric"},"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"],"type":"object"}"#;
    let weather_out = r#"{"additionalProperties":false,"properties":{"region":{"type":"string"}},"required":["region"],"type":"object"}"#;
    let echo = format!(
        r#"{{"annotations":{{"readOnlyHint":true}},"description":"Return the input object unchanged.","inputSchema":{echo_schema},"name":"echo","outputSchema":{echo_schema},"title":"Echo"}}"#
    );
    let weather = format!(
        r#"{{"annotations":{{"readOnlyHint":true}},"description":"Report the weather of a region.","inputSchema":{weather_in},"name":"weather","outputSchema":{weather_out},"title":"Weather"}}"#
    );
    format!(
        r#"{{"_meta":{meta},"cacheScope":"private","resultType":"complete","tools":[{echo},{weather}],"ttlMs":0}}"#
    )
}

/// The `server/discover` result (http-mcp.md §10.2).
pub fn discover_result() -> String {
    format!(
        r#"{{"_meta":{{"io.modelcontextprotocol/serverInfo":{{"name":"ptc-gateway","version":"{}"}}}},"cacheScope":"private","capabilities":{{"tools":{{"listChanged":false}}}},"resultType":"complete","supportedVersions":["2026-07-28"],"ttlMs":0}}"#,
        env!("CARGO_PKG_VERSION")
    )
}
