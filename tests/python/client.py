"""A real third-party client against the gateway: the official `mcp` Python SDK (pinned, in the closure of the
examples' time server, in config-examples/upstreams/requirements.txt).

Driven by tests/third_party/python.rs, which starts the real `ptc` binary and asserts what this prints.
It owns only the client side: connect in the SDK's default `mode="auto"` (which probes `server/discover`
at 2026-07-28 and adopts the result, falling back to the legacy `initialize` handshake only when the
server is not a 2026-07-28 server), list the tools, call them, and print what the SDK parsed. It asserts
nothing itself: the Rust test compares the printed JSON with the values the spec fixes
(http-mcp.md §10.2/§10.3, execution.md §7/§15.1).

Usage: client.py URL, with the bearer in the environment variable PTC_TEST_BEARER (never on argv, so it
does not show in process listings). Prints exactly one JSON object on stdout and exits 0, or prints
{"error": "<exception type>", "detail": "<leaf exceptions>"} and exits 1.
"""

import asyncio
import json
import os
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def dump(model):
    """The SDK's own wire-form view of a parsed result (aliases, JSON types, unset members left out)."""
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


# (label, tool, arguments): a success, a call whose argument is mirrored into an Mcp-Param header in its
# base64 form (http-mcp.md §9.2: not header-safe), and a call that fails the input contract (execution.md
# §15.1 "Invalid input").
CALLS = [
    ("shout", "shout", {"text": "hello, world"}),
    ("weather", "weather", {"region": "Hello, 世界"}),
    ("shout_invalid", "shout", {"text": ""}),
]


async def run(url, bearer):
    headers = {"Authorization": f"Bearer {bearer}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(20.0)) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, read_timeout_seconds=20.0) as client:
            session = client.session
            out = {
                "protocol_version": client.protocol_version,
                "legacy_handshake": session.initialize_result is not None,
                "discover": dump(session.discover_result) if session.discover_result else None,
            }
            listing = await client.list_tools()
            out["tools_list"] = dump(listing)
            calls = {}
            for label, tool, arguments in CALLS:
                calls[label] = dump(await client.call_tool(tool, arguments))
            out["calls"] = calls
            return out


def leaves(exc):
    """The leaf exceptions of an exception (group), as "Type: message" strings: anyio task groups wrap
    the one failure that matters in ExceptionGroups."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaves(inner)]
    return [f"{type(exc).__name__}: {exc}"]


def main():
    if len(sys.argv) != 2:
        print(json.dumps({"error": "usage", "detail": "client.py URL"}))
        return 2
    bearer = os.environ.get("PTC_TEST_BEARER", "")
    try:
        out = asyncio.run(run(sys.argv[1], bearer))
    except BaseException as exc:  # report every failure as data for the Rust side
        detail = "; ".join(leaves(exc))
        if bearer:
            detail = detail.replace(bearer, "<bearer>")
        print(json.dumps({"error": type(exc).__name__, "detail": detail}, sort_keys=True))
        return 1
    print(json.dumps(out, sort_keys=True, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
