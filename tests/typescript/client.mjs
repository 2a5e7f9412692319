// A real third-party client against the gateway: the official MCP TypeScript client SDK v2
// (`@modelcontextprotocol/client`, pinned in package.json and package-lock.json).
//
// Driven by tests/third_party/typescript.rs, which starts the real `ptc` binary and asserts what this
// prints. It owns only the client side: connect in one of the SDK's version negotiation modes, list the
// tools, call them, and print what the SDK parsed. It asserts nothing itself: the Rust test compares the
// printed JSON with the values the spec fixes (http-mcp.md §7.3.1, §10.2/§10.3, execution.md §7/§15.1).
//
// Modes (the second argument, `pin` when absent):
// - `pin`: the version pinned to 2026-07-28 (`versionNegotiation: { mode: { pin: "2026-07-28" } }`): it
//   probes `server/discover` and fails loudly, with no fallback, unless the server offers that revision;
// - `auto`: `versionNegotiation: { mode: "auto" }`: it probes `server/discover` and adopts a mutual modern
//   revision (falling back to the 2025 handshake only when the probe finds none);
// - `default`: no option at all; the SDK's default (`legacy`) is the 2025 `initialize` handshake, which
//   the gateway answers with -32022 (http-mcp.md §7.3.1).
//
// Usage: node client.mjs URL [MODE], with the bearer in the environment variable PTC_TEST_BEARER (never on
// argv, so it does not show in process listings). Prints exactly one JSON object on stdout and exits 0,
// or prints {"error": "<error name>", "code": <code>, "message": "<message>", "data": <data>,
// "detail": "<stack>"} and exits 1.

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

// The same calls as tests/python/client.py, in the same order: a success, a call whose argument the SDK
// mirrors into an Mcp-Param header in its base64 form (http-mcp.md §9.2: not header-safe), and a call
// that fails the input contract (execution.md §15.1 "Invalid input").
const CALLS = [
  ["shout", "shout", { text: "hello, world" }],
  ["weather", "weather", { region: "Hello, 世界" }],
  ["shout_invalid", "shout", { text: "" }],
];

// Every request (connect probe included) gives up after this long, so a silent gateway fails the run
// instead of hanging it; the Rust side has its own, longer deadline.
const TIMEOUT_MS = 20_000;

// The client options of each mode; `default` passes none.
const MODES = {
  pin: { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  auto: { versionNegotiation: { mode: "auto" } },
  default: undefined,
};

async function run(url, bearer, mode) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
  });
  const client = new Client({ name: "ptc-gateway-typescript-test", version: "0.0.0" }, MODES[mode]);
  await client.connect(transport, { timeout: TIMEOUT_MS });
  try {
    const out = {
      protocol_version: client.getNegotiatedProtocolVersion(),
      era: client.getProtocolEra(),
      discover: client.getDiscoverResult(),
      tools_list: await client.listTools(undefined, { timeout: TIMEOUT_MS }),
      calls: {},
    };
    for (const [label, name, args] of CALLS) {
      out.calls[label] = await client.callTool({ name, arguments: args }, { timeout: TIMEOUT_MS });
    }
    return out;
  } finally {
    await client.close();
  }
}

async function main() {
  const mode = process.argv[3] ?? "pin";
  if (process.argv.length < 3 || process.argv.length > 4 || !Object.hasOwn(MODES, mode)) {
    console.log(JSON.stringify({ error: "usage", detail: "client.mjs URL [pin|auto|default]" }));
    return 2;
  }
  const bearer = process.env.PTC_TEST_BEARER ?? "";
  try {
    // JSON.stringify is the SDK objects' wire form: members the SDK left undefined are omitted.
    console.log(JSON.stringify(await run(process.argv[2], bearer, mode)));
    return 0;
  } catch (err) {
    let detail = String(err?.stack ?? err);
    if (bearer) detail = detail.replaceAll(bearer, "<bearer>");
    // What the SDK reports: its error class, the protocol code, the message and the error data.
    const { name, code, message, data } = err ?? {};
    console.log(JSON.stringify({ error: name ?? typeof err, code, message, data, detail }));
    return 1;
  }
}

process.exitCode = await main();
