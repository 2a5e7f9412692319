//! execution.md §14: the JSON ↔ Luau mapping (the round-trip table of execution.md §14.5) and the `json`
//! library.

use mlua::Lua;

use super::*;
use crate::apps::luau::convert::{to_json, to_lua, NotConvertible};
use crate::apps::luau::json_lib;

fn lua() -> Lua {
    let lua = Lua::new();
    lua.globals().set("json", json_lib::library(&lua).unwrap()).unwrap();
    lua
}

fn encode(lua: &Lua, expression: &str) -> Result<String, NotConvertible> {
    let v: mlua::Value = lua.load(format!("return {expression}")).eval().unwrap();
    to_json(lua, &v).map(|v| crate::json::to_deterministic_string(&v))
}

/// execution.md §14.5, the rows with an input JSON: (input, output). Shared by the conversion tests here and
/// the runtime's round trips through an entry and across `:call` (`runtime.rs`).
pub(super) const ROUND_TRIPS: &[(&str, &str)] = &[
    ("{}", "{}"),
    ("[]", "[]"),
    (r#"{"a":null}"#, r#"{"a":null}"#),
    ("[1,null,3]", "[1,null,3]"),
    (r#"{"n":3}"#, r#"{"n":3}"#),
    (r#"{"x":1.0}"#, r#"{"x":1}"#),
    (r#"{"x":2.5}"#, r#"{"x":2.5}"#),
    (r#"{"big":9007199254740993}"#, r#"{"big":9007199254740992.0}"#),
    (r#"{"k":{"1":"a"}}"#, r#"{"k":{"1":"a"}}"#),
    (r#"{"s":"é\u0001"}"#, r#"{"s":"é\u0001"}"#),
];

/// execution.md §14.5 rows with an input: JSON → Luau → JSON.
#[test]
fn round_trips() {
    let lua = lua();
    for (input, output) in ROUND_TRIPS {
        let v = to_lua(&lua, &parse(input)).unwrap();
        let back = to_json(&lua, &v).unwrap();
        assert_eq!(crate::json::to_deterministic_string(&back), *output, "{input}");
    }
}

/// execution.md §14.5 rows without an input, and the further rules of execution.md §14.2.
#[test]
fn luau_to_json() {
    use NotConvertible as N;
    let table: &[(&str, Result<&str, NotConvertible>)] = &[
        ("{ 1, 2, 3 }", Ok("[1,2,3]")),
        ("json.array()", Ok("[]")),
        ("json.array({ 'a' })", Ok(r#"["a"]"#)),
        ("{ [1] = 'a', [3] = 'c' }", Err(N::MixedTable)),
        ("{ 1, x = 2 }", Err(N::MixedTable)),
        ("{ [1.5] = true }", Err(N::MixedTable)),
        ("{ [0] = true }", Err(N::MixedTable)),
        ("{ [-1] = true }", Err(N::MixedTable)),
        ("{ [true] = 1 }", Err(N::MixedTable)),
        ("json.array({ x = 1 })", Err(N::MixedTable)),
        ("0/0", Err(N::NonFinite)),
        ("math.huge", Err(N::NonFinite)),
        ("-math.huge", Err(N::NonFinite)),
        ("'\\xff'", Err(N::InvalidUtf8)),
        ("{ ['\\xff'] = 1 }", Err(N::InvalidUtf8)),
        ("-0.0", Ok("0")),
        ("1e300", Ok("1e300")),
        ("9007199254740991", Ok("9007199254740991")),
        ("9007199254740992", Ok("9007199254740992.0")),
        ("0.1", Ok("0.1")),
        ("{}", Ok("{}")),
        ("{ a = json.null, b = { true, false } }", Ok(r#"{"a":null,"b":[true,false]}"#)),
        ("setmetatable({}, { __index = { a = 1 } })", Ok("{}")),
        ("print", Err(N::Unsupported)),
        ("nil", Err(N::Unsupported)),
        ("buffer.create(1)", Err(N::Unsupported)),
        ("(function() local t = {} t.self = t return t end)()", Err(N::Cycle)),
        ("(function() local s = {} return { s, s } end)()", Ok("[{},{}]")),
    ];
    let lua = lua();
    for (expression, want) in table {
        assert_eq!(encode(&lua, expression).as_deref().map_err(|e| *e), *want, "{expression}");
    }
}

#[test]
fn bounds_on_depth_and_nodes() {
    let lua = lua();
    let nested = |n: usize| format!("{}{}", "{".repeat(n), "}".repeat(n));
    assert!(encode(&lua, &nested(64)).is_ok());
    assert_eq!(encode(&lua, &nested(65)), Err(NotConvertible::TooLarge));
    // 1 array + 99,999 elements = 100,000 nodes.
    let fill =
        |n: usize| format!("(function() local t = {{}} for i = 1, {n} do t[i] = 0 end return t end)()");
    assert!(encode(&lua, &fill(99_999)).is_ok());
    assert_eq!(encode(&lua, &fill(100_000)), Err(NotConvertible::TooLarge));
}

#[test]
fn json_library() {
    let lua = lua();
    let script = r#"
        assert(json.encode({ b = 1, a = { 1.5, "x" } }) == '{"a":[1.5,"x"],"b":1}')
        local v = json.decode('{"a":[],"b":null,"c":{}}')
        assert(v.b == json.null and json.null ~= nil)
        assert(json.encode(v) == '{"a":[],"b":null,"c":{}}')
        assert(not pcall(json.decode, '{"a":1,"a":2}'))
        assert(not pcall(json.decode, '[1,]'))
        assert(not pcall(json.encode, { 1, x = 2 }))
        assert(not pcall(json.encode, 0/0))
        local t = {}
        assert(json.array(t) == t)
        return true
    "#;
    assert!(lua.load(script).eval::<bool>().unwrap());
}
