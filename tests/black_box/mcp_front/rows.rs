//! The row tables of http-mcp.md §12.3 (rows 16–21), §12.5 and §12.7–§12.10 that a single request on a
//! fresh connection decides, written as (number, request, expected answer).

use crate::support::mcp::{discover_result, listing_result, result, rpc_error, Req, B_LIST_BODY, ORIGIN};
use crate::support::{sse, TOKEN};

/// What a row expects.
pub struct Row {
    pub n: u16,
    pub req: Req,
    /// Send only the head (the body is withheld, rows 67 and 79).
    pub head_only: bool,
    pub status: u16,
    pub body: String,
    /// `connection: close` and the connection closes after the answer.
    pub close: bool,
    /// The answer is a committed event stream; `body` is its de-chunked body.
    pub sse: bool,
}

fn row(n: u16, req: Req, status: u16, body: impl Into<String>, close: bool) -> Row {
    Row { n, req, head_only: false, status, body: body.into(), close, sse: false }
}

/// "SSE ok" (§12.2): the call passed C4 and its message is the success result with `structured`.
fn sse_ok(n: u16, req: Req, structured: &str) -> Row {
    Row { sse: true, ..row(n, req, 200, sse::success(1, structured), false) }
}

/// "SSE input" (§12.2): the call passed C4 and failed its input contract.
fn sse_input(n: u16, req: Req) -> Row {
    Row { sse: true, ..row(n, req, 200, sse::invalid_input(1), false) }
}

/// What the `weather` fixture answers for `arguments` that passed C3: its result `{region}` when the
/// arguments satisfy the input contract (a string region, an integral `days`, a boolean `metric`), else
/// the invalid-input error.
fn weather_answer(n: u16, req: Req, arguments: &str) -> Row {
    let value: serde_json::Value = serde_json::from_str(arguments).expect("arguments");
    let days_ok = value.get("days").is_none_or(|d| d.as_f64().is_some_and(|f| f.fract() == 0.0));
    let metric_ok = value.get("metric").is_none_or(|m| m.is_boolean());
    match value.get("region").and_then(|r| r.as_str()) {
        Some(region) if days_ok && metric_ok => {
            sse_ok(n, req, &serde_json::to_string(&serde_json::json!({ "region": region })).expect("json"))
        }
        _ => sse_input(n, req),
    }
}

fn fixed(code: &str) -> String {
    format!(r#"{{"error":"{code}"}}"#)
}

/// `_meta` of B-list as written there.
const CAPS: &str = r#""io.modelcontextprotocol/clientCapabilities":{}"#;
const PV: &str = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28""#;

fn with_client_info(host: &str, info: &str) -> Req {
    Req::b_list(host).edit(CAPS, &format!(r#"{CAPS},"io.modelcontextprotocol/clientInfo":{info}"#))
}

fn ci(extra: &str) -> String {
    format!(r#"{{"name":"c","version":"1"{extra}}}"#)
}

/// `_meta` padded with a `pad` member so that its deterministic encoding has `total` bytes.
fn padded_meta(host: &str, total: usize) -> Req {
    // `{` + PV + `,` + CAPS + `,"pad":"` + n + `"` + `}`.
    let n = total - (1 + PV.len() + 1 + CAPS.len() + 8 + 1 + 1);
    Req::b_list(host).edit(CAPS, &format!(r#"{CAPS},"pad":"{}""#, "x".repeat(n)))
}

fn versions(req: Req, version: &str) -> Req {
    req.set("MCP-Protocol-Version", version)
        .edit(r#"Version":"2026-07-28""#, &format!(r#"Version":"{version}""#))
}

fn methods(req: Req, method: &str) -> Req {
    req.set("Mcp-Method", method).edit(r#""method":"tools/list""#, &format!(r#""method":"{method}""#))
}

fn discover(host: &str) -> Req {
    methods(Req::b_list(host), "server/discover")
}

/// §12.3 rows 16–21, §12.4 rows 32–33 (M2) and §12.5–§12.6 (rows 39–78 and 89; the IPv6 rows 46–47 run on
/// their own deployment).
pub fn transport_rows(host: &str, port: u16) -> Vec<Row> {
    let b = || Req::b_list(host);
    let list = |id: &str| result(id, &listing_result());
    let get = Req {
        method: "GET".into(),
        target: "/mcp".into(),
        headers: vec![("Host".into(), host.as_bytes().to_vec())],
        body: vec![],
        no_length: true,
    };
    let wrong = "Bearer wrong";
    let other_port = if port == u16::MAX { port - 1 } else { port + 1 };
    let mut rows = vec![
        row(16, get.clone(), 405, fixed("method_not_allowed"), false),
        row(17, get.clone().set("Host", "evil.example"), 405, fixed("method_not_allowed"), false),
        row(18, b().method("DELETE").add("Mcp-Session-Id", "abc"), 405, fixed("method_not_allowed"), true),
        row(19, b().method("OPTIONS"), 405, fixed("method_not_allowed"), true),
        row(20, b().target("/mcp?trace=1"), 200, list("1"), false),
        row(21, b().target(&format!("http://{host}/mcp")), 400, r#"{"status":"invalid_authority"}"#, true),
        row(39, b().set("Host", &format!("localhost:{port}")), 400, fixed("invalid_authority"), true),
        row(40, b().set("Host", "127.0.0.1"), 400, fixed("invalid_authority"), true),
        row(41, b().set("Host", &format!("127.0.0.1:{other_port}")), 400, fixed("invalid_authority"), true),
        row(42, b().set("Host", &format!("127.0.0.1:0{port}")), 400, fixed("invalid_authority"), true),
        row(43, b().remove("Host"), 400, fixed("invalid_authority"), true),
        row(44, b().add("Host", host), 400, fixed("invalid_authority"), true),
        row(45, b().set("Host", &format!("  {host}  ")), 200, list("1"), false),
        row(48, b().set("Host", &format!("[::1]:{port}")), 400, fixed("invalid_authority"), true),
        row(49, b().add("Origin", ORIGIN), 200, list("1"), false),
        row(50, b().add("Origin", "http://127.0.0.1:3000/"), 403, fixed("origin_forbidden"), true),
        row(51, b().add("Origin", "HTTP://127.0.0.1:3000"), 403, fixed("origin_forbidden"), true),
        row(52, b().add("Origin", "null"), 403, fixed("origin_forbidden"), true),
        row(53, b().add("Origin", ORIGIN).add("Origin", ORIGIN), 403, fixed("origin_forbidden"), true),
        row(
            54,
            b().set("Host", "evil.example").add("Origin", "https://evil.example"),
            400,
            fixed("invalid_authority"),
            true,
        ),
        row(
            55,
            b().add("Origin", "https://evil.example").set("Authorization", wrong),
            403,
            fixed("origin_forbidden"),
            true,
        ),
    ];
    rows.extend(credential_rows(host));
    rows.extend(header_size_rows(host));
    rows
}

/// §12.5 rows 56–78 and §12.6 row 89: bearer and media types.
fn credential_rows(host: &str) -> Vec<Row> {
    let b = || Req::b_list(host);
    let list = |id: &str| result(id, &listing_result());
    let wrong = "Bearer wrong";
    let mut rows = vec![
        row(56, b().remove("Authorization"), 401, fixed("unauthorized"), true),
        row(57, b().set("Authorization", &format!("bearer {TOKEN}")), 200, list("1"), false),
        row(58, b().set("Authorization", &format!("BEARER    {TOKEN}")), 200, list("1"), false),
        row(59, b().set("Authorization", &format!("Bearer {TOKEN}  ")), 200, list("1"), false),
        row(60, b().set("Authorization", &format!("Bearer\t{TOKEN}")), 401, fixed("unauthorized"), true),
        row(61, b().set("Authorization", "Basic YTpi"), 401, fixed("unauthorized"), true),
        row(
            62,
            b().set("Authorization", &format!("Bearer {}", "a".repeat(31))),
            401,
            fixed("unauthorized"),
            true,
        ),
        row(63, b().set("Authorization", &format!("Bearer {TOKEN}b")), 401, fixed("unauthorized"), true),
        row(64, b().set("Authorization", &format!("Bearer {TOKEN} extra")), 401, fixed("unauthorized"), true),
        row(65, b().add("Authorization", &format!("Bearer {TOKEN}")), 401, fixed("unauthorized"), true),
        row(
            66,
            b().set("Authorization", wrong).set("Content-Type", "text/plain").body("not json"),
            401,
            fixed("unauthorized"),
            true,
        ),
        Row {
            head_only: true,
            ..row(
                67,
                b().set("Authorization", wrong).add("Expect", "100-continue"),
                401,
                fixed("unauthorized"),
                true,
            )
        },
        row(68, b().remove("Content-Type"), 415, fixed("unsupported_media_type"), true),
        row(69, b().set("Content-Type", "text/plain"), 415, fixed("unsupported_media_type"), true),
        row(70, b().set("Content-Type", "application/json; charset=utf-8"), 200, list("1"), false),
        row(71, b().set("Content-Type", "Application/JSON;Charset=\"UTF-8\""), 200, list("1"), false),
        row(
            72,
            b().set("Content-Type", "application/json; charset=utf-16"),
            415,
            fixed("unsupported_media_type"),
            true,
        ),
        row(
            73,
            b().set("Content-Type", "application/json; charset=utf-8; boundary=x"),
            415,
            fixed("unsupported_media_type"),
            true,
        ),
        row(74, b().add("Content-Type", "application/json"), 415, fixed("unsupported_media_type"), true),
        row(
            75,
            b().set("Content-Type", "text/plain").set("Accept", "text/html"),
            415,
            fixed("unsupported_media_type"),
            true,
        ),
        row(76, b().set("Accept", "application/json"), 406, fixed("not_acceptable"), true),
        row(77, b().set("Accept", "*/*"), 200, list("1"), false),
        row(78, b().set("Authorization", wrong).set("Accept", "text/html"), 401, fixed("unauthorized"), true),
        row(89, b().body(""), 400, rpc_error(-32700, None), false),
    ];
    // §6.7: the vector table on the wire too (two lines and absent are covered by the unit table).
    rows.push(row(
        0,
        b().set("Accept", "text/*;q=0, text/event-stream, application/json"),
        200,
        list("1"),
        false,
    ));
    rows.push(row(
        0,
        b().set("Accept", "*/*;q=1, application/json;q=0, text/event-stream;q=1"),
        406,
        fixed("not_acceptable"),
        true,
    ));
    rows.push(row(
        0,
        b().set("Accept", "application/json").add("Accept", "text/event-stream"),
        406,
        fixed("not_acceptable"),
        true,
    ));
    rows
}

/// The M2 sum of a request (http-mcp.md §6.2): lowercase names plus trimmed values, `Content-Length`
/// included.
fn m2_sum(req: &Req) -> usize {
    let trimmed = |v: &[u8]| String::from_utf8_lossy(v).trim_matches([' ', '\t']).len();
    let lines: usize = req.headers.iter().map(|(n, v)| n.len() + trimmed(v)).sum();
    lines + "content-length".len() + req.body.len().to_string().len()
}

/// B-list plus `X-Fill-<nn>` lines (each under the 8,192-byte line limit) so that the M2 sum is `total`.
fn filled(host: &str, total: usize) -> Req {
    let mut req = Req::b_list(host);
    for i in 0.. {
        let name = format!("X-Fill-{i:02}");
        let remaining = total - m2_sum(&req);
        if remaining > 8_000 + 2 * name.len() + 1 {
            req = req.add(&name, &"f".repeat(8_000));
        } else {
            req = req.add(&name, &"f".repeat(remaining - name.len()));
            break;
        }
    }
    assert_eq!(m2_sum(&req), total);
    req
}

/// §12.4 rows 32–33: the M2 bound, exactly at and one above 32,768.
fn header_size_rows(host: &str) -> Vec<Row> {
    vec![
        row(32, filled(host, 32_768), 200, result("1", &listing_result()), false),
        row(33, filled(host, 32_769), 431, fixed("request_headers_too_large"), true),
    ]
}

/// §12.7 rows 90–119.
pub fn json_rows(host: &str) -> Vec<Row> {
    let b = || Req::b_list(host);
    let list = |id: &str| result(id, &listing_result());
    let id = |v: &str| b().edit(r#""id":1"#, &format!(r#""id":{v}"#));
    let bad = |n| row(n, b(), 400, rpc_error(-32700, None), false);
    let invalid = |n, req, id: Option<&str>| row(n, req, 400, rpc_error(-32600, id), false);
    let deep = |n: usize| format!("{{\"a\":{}0{}}}", "[".repeat(n), "]".repeat(n));
    let zeros = |n: usize| format!("{{\"a\":[{}]}}", vec!["0"; n].join(","));
    let x256 = format!("\"{}\"", "x".repeat(256));
    let e128 = format!("\"{}\"", "é".repeat(128));
    let mut raw_ff = B_LIST_BODY.replace(CAPS, &format!(r#"{CAPS},"x":"aXb""#)).into_bytes();
    let at = raw_ff.iter().position(|c| *c == b'X').expect("marker");
    raw_ff[at] = 0xff;
    vec![
        Row { req: b().body("{"), ..bad(90) },
        Row { req: b().edit(PV, &format!("{PV},{PV}")), ..bad(91) },
        Row { req: b().body_bytes([&[0xef, 0xbb, 0xbf][..], B_LIST_BODY.as_bytes()].concat()), ..bad(92) },
        Row { req: b().body(&format!("{B_LIST_BODY} x")), ..bad(93) },
        Row { req: b().edit(CAPS, &format!(r#"{CAPS},"x":"\ud800""#)), ..bad(94) },
        Row { req: b().body_bytes(raw_ff), ..bad(95) },
        Row { req: b().edit(CAPS, &format!(r#"{CAPS},"x":1e400"#)), ..bad(96) },
        Row { req: b().edit(CAPS, &format!(r#"{CAPS},"x":18446744073709551616"#)), ..bad(97) },
        invalid(98, b().body(&deep(62)), None),
        Row { req: b().body(&deep(63)), ..bad(99) },
        invalid(100, b().body(&zeros(99_997)), None),
        Row { req: b().body(&zeros(99_998)), ..bad(101) },
        invalid(102, b().body(&format!("[{B_LIST_BODY}]")), None),
        invalid(103, b().edit(r#""jsonrpc":"2.0","#, ""), Some("1")),
        invalid(104, b().edit(r#""jsonrpc":"2.0""#, r#""jsonrpc":"1.0""#), Some("1")),
        invalid(105, b().edit(r#""id":1,"#, r#""id":1,"extra":1,"#), Some("1")),
        invalid(106, b().edit(r#""method":"tools/list""#, r#""method":5"#), Some("1")),
        invalid(107, b().body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[]}"#), Some("1")),
        invalid(108, b().edit(r#""id":1,"#, ""), None),
        invalid(109, id("null"), None),
        invalid(110, id("1.0"), None),
        invalid(111, id("true"), None),
        invalid(112, id(r#""""#), None),
        row(113, id(&x256), 200, list(&x256), false),
        invalid(114, id(&format!("\"{}\"", "x".repeat(257))), None),
        row(115, id(&e128), 200, list(&e128), false),
        row(116, id("9007199254740991"), 200, list("9007199254740991"), false),
        row(117, id("-9007199254740991"), 200, list("-9007199254740991"), false),
        invalid(118, id("9007199254740992"), None),
        invalid(119, id(r#""abc""#).edit(r#""jsonrpc":"2.0""#, r#""jsonrpc":"1.0""#), Some(r#""abc""#)),
        row(0, id("-0"), 200, list("0"), false),
    ]
}

/// §12.8 rows 120–168 (without the fenced rows 164 and 169).
pub fn meta_rows(host: &str) -> Vec<Row> {
    let b = || Req::b_list(host);
    let list = || result("1", &listing_result());
    let meta_bad = |n, req| row(n, req, 400, rpc_error(-32602, Some("1")), false);
    let mismatch = |n, req| row(n, req, 400, rpc_error(-32020, Some("1")), false);
    let not_found = |n, req| row(n, req, 404, rpc_error(-32601, Some("1")), false);
    let params_bad = |n, req| row(n, req, 200, rpc_error(-32602, Some("1")), false);
    let unsupported = |v: &str| {
        format!(
            r#"{{"error":{{"code":-32022,"data":{{"requested":"{v}","supported":["2026-07-28"]}},"message":"Unsupported protocol version"}},"id":1,"jsonrpc":"2.0"}}"#
        )
    };
    let cursor = |req: Req, c: &str| req.edit(r#""params":{"#, &format!(r#""params":{{"cursor":{c},"#));
    vec![
        meta_bad(120, b().body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)),
        meta_bad(121, b().body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#)),
        meta_bad(122, b().body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":[]}}"#)),
        meta_bad(123, b().edit(&format!("{PV},"), "")),
        meta_bad(124, b().edit(r#""2026-07-28""#, "20260728")),
        meta_bad(125, b().edit(&format!(",{CAPS}"), "")),
        meta_bad(126, b().edit(CAPS, r#""io.modelcontextprotocol/clientCapabilities":null"#)),
        row(127, with_client_info(host, &ci("")), 200, list(), false),
        meta_bad(128, with_client_info(host, r#"{"name":"c"}"#)),
        meta_bad(129, with_client_info(host, &ci(r#","icons":42"#))),
        meta_bad(130, with_client_info(host, &ci(r#","websiteUrl":"http://exa mple.com""#))),
        meta_bad(131, with_client_info(host, &ci(r#","websiteUrl":"http://example.com/%""#))),
        meta_bad(132, with_client_info(host, &ci(r#","websiteUrl":"http://exa%ZZmple""#))),
        row(
            133,
            with_client_info(host, &ci(r#","websiteUrl":"HTTP://example.com/path""#)),
            200,
            list(),
            false,
        ),
        row(134, with_client_info(host, &ci(r#","websiteUrl":"http://example.com:80""#)), 200, list(), false),
        meta_bad(135, with_client_info(host, &ci(r#","icons":[{"src":"/icon.png"}]"#))),
        meta_bad(
            136,
            with_client_info(host, &ci(r#","icons":[{"src":"https://x.example/i.png","theme":"blue"}]"#)),
        ),
        row(137, with_client_info(host, &ci(r#","vendor":"x""#)), 200, list(), false),
        row(138, padded_meta(host, 65_536), 200, list(), false),
        meta_bad(139, padded_meta(host, 65_537)),
        row(
            140,
            b().edit(
                CAPS,
                &format!(r#"{CAPS},"progressToken":"p1","io.modelcontextprotocol/logLevel":"debug""#),
            ),
            200,
            list(),
            false,
        ),
        meta_bad(
            141,
            b().remove("MCP-Protocol-Version")
                .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#),
        ),
        mismatch(142, b().remove("MCP-Protocol-Version")),
        mismatch(143, b().add("MCP-Protocol-Version", "2026-07-28")),
        mismatch(144, b().edit(r#""2026-07-28""#, r#""v999.0.0""#)),
        row(145, versions(b(), "2025-11-25"), 400, unsupported("2025-11-25"), false),
        row(146, versions(b(), "v999.0.0"), 400, unsupported("v999.0.0"), false),
        mismatch(147, b().remove("Mcp-Method")),
        mismatch(148, b().set("Mcp-Method", "TOOLS/LIST")),
        row(149, b().rename("Mcp-Method", "mcp-method"), 200, list(), false),
        row(150, b().rename("Mcp-Method", "MCP-METHOD"), 200, list(), false),
        row(151, b().set("Mcp-Method", "\ttools/list\t "), 200, list(), false),
        mismatch(152, b().set("Mcp-Method", "tools/call")),
        mismatch(153, b().add("Mcp-Method", "tools/list")),
        mismatch(154, b().add("Mcp-Name", "echo")),
        row(155, b().add("Mcp-Session-Id", "abc").add("Last-Event-ID", "5"), 200, list(), false),
        row(156, versions(methods(b(), "initialize"), "2025-11-25"), 400, unsupported("2025-11-25"), false),
        not_found(157, methods(b(), "resources/list")),
        not_found(158, methods(b(), "initialize")),
        not_found(159, methods(b(), "ping")),
        not_found(160, methods(b(), "prompts/get").add("Mcp-Name", "x")),
        not_found(161, methods(b(), "tools/List")),
        not_found(162, cursor(methods(b(), "resources/list"), "5")),
        row(163, discover(host), 200, result("1", &discover_result()), false),
        params_bad(165, cursor(discover(host), r#""x""#)),
        mismatch(166, discover(host).add("Mcp-Name", "echo")),
        params_bad(167, cursor(b(), r#""""#)),
        params_bad(168, b().edit(r#""params":{"#, r#""params":{"extra":1,"#)),
    ]
}

/// §12.12 rows 249–256: requests of an earlier revision (http-mcp.md §7.3.1).
pub fn earlier_rows(host: &str) -> Vec<Row> {
    let unsupported = |v: &str| {
        format!(
            r#"{{"error":{{"code":-32022,"data":{{"requested":"{v}","supported":["2026-07-28"]}},"message":"Unsupported protocol version"}},"id":1,"jsonrpc":"2.0"}}"#
        )
    };
    let meta_bad = |n, req| row(n, req, 400, rpc_error(-32602, Some("1")), false);
    // A 2025 `initialize` as an SDK of that revision sends it: no `MCP-Protocol-Version`, no `Mcp-Method`.
    let initialize = |params: &str| {
        Req::b_list(host)
            .remove("MCP-Protocol-Version")
            .remove("Mcp-Method")
            .body(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{params}}}"#))
    };
    let init_params =
        r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}"#;
    let list_2025 = |version: &str| {
        Req::b_list(host)
            .set("MCP-Protocol-Version", version)
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#)
    };
    vec![
        row(249, initialize(init_params), 400, unsupported("2025-11-25"), false),
        row(
            250,
            initialize(&init_params.replace("2025-11-25", "2024-11-05"))
                .add("MCP-Protocol-Version", "2025-06-18"),
            400,
            unsupported("2024-11-05"),
            false,
        ),
        row(251, initialize(r#"{"capabilities":{}}"#), 400, unsupported(""), false),
        row(252, initialize(r#"{"protocolVersion":20251125}"#), 400, unsupported(""), false),
        row(253, list_2025("2025-11-25"), 400, unsupported("2025-11-25"), false),
        row(
            254,
            list_2025("2025-06-18")
                .remove("Mcp-Method")
                .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#),
            400,
            unsupported("2025-06-18"),
            false,
        ),
        meta_bad(255, list_2025("2025-11-25").add("MCP-Protocol-Version", "2025-11-25")),
        row(
            256,
            versions(Req::b_list(host), "2025-11-25").edit(&format!(",{CAPS}"), ""),
            400,
            unsupported("2025-11-25"),
            false,
        ),
    ]
}

/// §12.9 rows 170–193 and §12.10 rows 194–229 (without the fenced rows 190 and 191).
pub fn call_rows(host: &str) -> Vec<Row> {
    let c = || Req::b_call(host);
    let mismatch = |n, req| row(n, req, 400, rpc_error(-32020, Some("1")), false);
    let params_bad = |n, req| row(n, req, 200, rpc_error(-32602, Some("1")), false);
    let hi = r#"{"text":"hi"}"#;
    let long = "n".repeat(129);
    let mut rows = vec![
        sse_ok(170, c(), hi),
        params_bad(171, c().edit(r#""name":"echo","#, "")),
        params_bad(172, c().set("Mcp-Name", &long).edit(r#""name":"echo""#, &format!(r#""name":"{long}""#))),
        params_bad(173, c().edit(r#""name":"echo""#, r#""name":5"#)),
        params_bad(174, c().edit(r#"{"text":"hi"}"#, "[]")),
        params_bad(175, c().edit(r#"{"text":"hi"}"#, "null")),
        params_bad(176, c().edit(r#""name":"echo","#, r#""name":"echo","requestState":"x","#)),
        mismatch(177, c().remove("Mcp-Name")),
        mismatch(178, c().set("Mcp-Name", "Echo")),
        sse_ok(179, c().set("Mcp-Name", "  echo  "), hi),
        sse_ok(180, c().set("Mcp-Name", "=?base64?ZWNobw==?="), hi),
        mismatch(181, c().set("Mcp-Name", "=?base64?ZWNobw=?=")),
        mismatch(182, c().add("Mcp-Name", "echo")),
        params_bad(183, c().set("Mcp-Name", "nope").edit(r#""name":"echo""#, r#""name":"nope""#)),
        mismatch(184, c().remove("Mcp-Name").edit(r#""name":"echo""#, r#""name":"nope""#)),
        sse_input(185, c().edit(r#","arguments":{"text":"hi"}"#, "")),
        sse_input(186, c().edit(r#"{"text":"hi"}"#, r#"{"text":"hi","x":1}"#)),
        sse_input(187, c().edit(r#"{"text":"hi"}"#, r#"{"text":5}"#)),
        mismatch(192, c().add("Mcp-Param-Region", "x")),
        params_bad(
            193,
            c().set("Mcp-Name", "nope")
                .edit(r#""name":"echo""#, r#""name":"nope""#)
                .add("Mcp-Param-Region", "x"),
        ),
        params_bad(244, c().remove("Mcp-Name").edit(r#""name":"echo""#, r#""name":"""#)),
    ];
    rows.extend(param_rows(host));
    rows
}

/// §12.10 rows 194–229: (row, arguments, param lines, passes C3).
fn param_rows(host: &str) -> Vec<Row> {
    let mismatch = |n, req| row(n, req, 400, rpc_error(-32020, Some("1")), false);
    let mut rows = Vec::new();
    let r = "Mcp-Param-Region";
    let d = "Mcp-Param-Days";
    let m = "Mcp-Param-Metric";
    type Lines<'a> = &'a [(&'a str, &'a [u8])];
    let table: &[(u16, &str, Lines, bool)] = &[
        (194, r#"{"region":"us-west1"}"#, &[(r, b"us-west1")], true),
        (195, r#"{"region":"us-west1"}"#, &[], false),
        (196, r#"{"region":"us-west1"}"#, &[("mcp-param-region", b"us-west1")], true),
        (197, r#"{"region":"us-west1"}"#, &[("MCP-PARAM-REGION", b"us-west1")], true),
        (198, r#"{"region":"us-west1"}"#, &[(r, b"=?base64?dXMtd2VzdDE=?=")], true),
        (199, r#"{"region":"us-west1"}"#, &[(r, b"US-WEST1")], false),
        (200, r#"{"region":"us-west1"}"#, &[(r, b"us-west1"), (r, b"us-west1")], false),
        (201, r#"{"region":"us-west1"}"#, &[(r, b"us-west1"), ("Mcp-Param-Extra", b"1")], false),
        (202, r#"{"region":"us west 1"}"#, &[(r, b"us west 1")], true),
        (203, r#"{"region":"Hello, 世界"}"#, &[(r, b"=?base64?SGVsbG8sIOS4lueVjA==?=")], true),
        (204, r#"{"region":"Hello, 世界"}"#, &[(r, "Hello, 世界".as_bytes())], false),
        (205, r#"{"region":" padded "}"#, &[(r, b"=?base64?IHBhZGRlZCA=?=")], true),
        (206, r#"{"region":" padded "}"#, &[(r, b" padded ")], false),
        (207, r#"{"region":"=?base64?literal?="}"#, &[(r, b"=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=")], true),
        (208, r#"{"region":"=?base64?literal?="}"#, &[(r, b"=?base64?literal?=")], false),
        (209, r#"{"region":"Hello"}"#, &[(r, b"=?base64?SGVsbG8=?=")], true),
        (210, r#"{"region":"Hello"}"#, &[(r, b"=?base64?SGVsbG8?=")], false),
        (211, r#"{"region":"Hello"}"#, &[(r, b"=?base64?SGVs!!!bG8=?=")], false),
        (212, r#"{"region":"Hello"}"#, &[(r, b"=?BASE64?SGVsbG8=?=")], false),
        (213, r#"{"region":"SGVsbG8="}"#, &[(r, b"SGVsbG8=")], true),
        (214, r#"{"region":"=?base64?SGVsbG8="}"#, &[(r, b"=?base64?SGVsbG8=")], true),
        (215, r#"{"region":""}"#, &[(r, b"")], true),
        (216, r#"{"region":"x","days":3}"#, &[(r, b"x"), (d, b"3")], true),
        (217, r#"{"region":"x","days":3}"#, &[(r, b"x")], false),
        (218, r#"{"region":"x","days":3}"#, &[(r, b"x"), (d, b"03")], false),
        (219, r#"{"region":"x","days":3}"#, &[(r, b"x"), (d, b"=?base64?Mw==?=")], true),
        (220, r#"{"region":"x","days":3.0}"#, &[(r, b"x"), (d, b"3")], true),
        (221, r#"{"region":"x","days":1.5}"#, &[(r, b"x"), (d, b"1.5")], false),
        (222, r#"{"region":"x","days":9007199254740992}"#, &[(r, b"x"), (d, b"9007199254740992")], false),
        (223, r#"{"region":"x","days":null}"#, &[(r, b"x")], true),
        (224, r#"{"region":"x","days":null}"#, &[(r, b"x"), (d, b"0")], false),
        (225, r#"{"region":"x","metric":true}"#, &[(r, b"x"), (m, b"true")], true),
        (226, r#"{"region":"x","metric":true}"#, &[(r, b"x"), (m, b"True")], false),
        (227, r#"{"region":5}"#, &[(r, b"5")], true),
        (228, r#"{"region":{"a":1}}"#, &[(r, br#"{"a":1}"#)], false),
        (229, r#"{"days":3}"#, &[(d, b"3")], true),
    ];
    for (n, arguments, params, passes) in table {
        let req = Req::b_weather(host, arguments, params);
        rows.push(if *passes { weather_answer(*n, req, arguments) } else { mismatch(*n, req) });
    }
    rows
}

/// §12.11 precedence rows that a single request decides (fenced and saturated ones are in-process).
pub fn precedence_rows(host: &str) -> Vec<Row> {
    let b = || Req::b_list(host);
    let fill = (0..5).fold(b(), |r, i| r.add(&format!("X-Fill-{i}"), &"f".repeat(8_000)));
    let wrong = "Bearer wrong";
    vec![
        row(
            230,
            Req { method: "GET".into(), ..b().set("Host", "evil.example").remove("Authorization") },
            405,
            fixed("method_not_allowed"),
            true,
        ),
        row(231, fill.set("Host", "evil.example"), 431, fixed("request_headers_too_large"), true),
        row(
            232,
            b().set("Host", "evil.example").set("Authorization", wrong).set("Content-Type", "text/plain"),
            400,
            fixed("invalid_authority"),
            true,
        ),
        row(
            233,
            b().add("Origin", "https://evil.example").set("Authorization", wrong),
            403,
            fixed("origin_forbidden"),
            true,
        ),
        Row {
            head_only: true,
            ..row(
                234,
                b().set("Authorization", wrong).body_bytes(vec![b' '; 10_000_000]),
                401,
                fixed("unauthorized"),
                true,
            )
        },
        Row {
            head_only: true,
            ..row(
                235,
                b().set("Accept", "text/html").body_bytes(vec![b' '; 10_000_000]),
                406,
                fixed("not_acceptable"),
                true,
            )
        },
        row(237, b().body("{").set("Mcp-Method", "nope"), 400, rpc_error(-32700, None), false),
        row(
            238,
            b().edit(r#""id":1"#, r#""id":null"#).edit(&format!(r#""_meta":{{{PV},{CAPS}}}"#), ""),
            400,
            rpc_error(-32600, None),
            false,
        ),
        row(
            239,
            b().edit(&format!(r#""_meta":{{{PV},{CAPS}}}"#), "").set("Mcp-Method", "nope"),
            400,
            rpc_error(-32602, Some("1")),
            false,
        ),
        row(
            240,
            versions(b(), "2025-11-25").set("Mcp-Method", "nope"),
            400,
            rpc_error(-32020, Some("1")),
            false,
        ),
        row(
            241,
            versions(methods(b(), "nope"), "2025-11-25"),
            400,
            r#"{"error":{"code":-32022,"data":{"requested":"2025-11-25","supported":["2026-07-28"]},"message":"Unsupported protocol version"},"id":1,"jsonrpc":"2.0"}"#,
            false,
        ),
        row(
            242,
            methods(b(), "nope").edit(r#""params":{"#, r#""params":{"extra":1,"#),
            404,
            rpc_error(-32601, Some("1")),
            false,
        ),
    ]
}
