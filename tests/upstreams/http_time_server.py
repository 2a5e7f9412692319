"""A real Streamable HTTP upstream for the tests: the official time server's tools behind a static bearer.

It owns only the server side of one loopback endpoint: the very `get_current_time` and `convert_time`
tools of the pinned `mcp-server-time` (its `create_server`, so names, descriptions, schemas and
annotations are the server's own), served by the pinned `mcp` 2.x SDK's Streamable HTTP app at
`http://127.0.0.1:<port>/mcp`, both eras (a `server/discover` or 2026-07-28 request is served
sessionlessly, an `initialize` gets a legacy session). In front of the app sits one check the gateway's
static `headers` (providers.md §5.2) must satisfy: `Authorization: Bearer <token>`, the token read from
the environment variable PTC_UPSTREAM_TOKEN (never argv, so it does not show in process listings). Any
other request, on any path, is answered 401 with `WWW-Authenticate: Bearer` and a fixed JSON body, before
the MCP app sees it (providers.md §5.3: 401 is `mcp_authentication_failed`).

It asserts nothing: tests start it, wait for its one stdout line, and judge what it answers.

Usage: http_time_server.py PORT, with PTC_UPSTREAM_TOKEN set (non-empty). The local timezone named in
the tool descriptions is fixed to Etc/UTC so what the server advertises (and so a snapshot pin) does not
depend on the machine. Prints exactly `listening http://127.0.0.1:<port>/mcp` on stdout once the socket
accepts connections, then serves until SIGTERM/SIGINT or until stdin reaches end of file (so a test
harness that dies cannot leave it behind).

With PTC_UPSTREAM_TLS_CERT and PTC_UPSTREAM_TLS_KEY (PEM files) it serves HTTPS with that certificate
instead, and the line is `listening https://localhost:<port>/mcp` (the name the tests' certificate carries).
"""

import asyncio
import hmac
import os
import sys

import uvicorn
from mcp_server_time.server import create_server

LOCAL_TIMEZONE = "Etc/UTC"
UNAUTHORIZED_BODY = b'{"error":"unauthorized"}'


class RequireBearer:
    """ASGI middleware: only requests carrying exactly `Authorization: Bearer <token>` reach the app."""

    def __init__(self, app, token):
        self.app = app
        self.expected = b"Bearer " + token.encode()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        values = [v for (k, v) in scope.get("headers", []) if k == b"authorization"]
        if len(values) == 1 and hmac.compare_digest(values[0], self.expected):
            return await self.app(scope, receive, send)
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(UNAUTHORIZED_BODY)).encode()),
                    (b"www-authenticate", b"Bearer"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": UNAUTHORIZED_BODY})


async def stdin_closed():
    """Returns when stdin reaches end of file (the parent is gone or closed it)."""
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.buffer.read)


async def main(port, token, tls):
    app = create_server(LOCAL_TIMEZONE).streamable_http_app(host="127.0.0.1")
    cert, key = tls if tls else (None, None)
    config = uvicorn.Config(
        RequireBearer(app, token),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="on",
        ssl_certfile=cert,
        ssl_keyfile=key,
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        if serving.done():
            serving.result()
            sys.exit("error: the server stopped before it listened")
        await asyncio.sleep(0.01)
    origin = f"https://localhost:{port}" if tls else f"http://127.0.0.1:{port}"
    print(f"listening {origin}/mcp", flush=True)
    watcher = asyncio.create_task(stdin_closed())
    await asyncio.wait({serving, watcher}, return_when=asyncio.FIRST_COMPLETED)
    server.should_exit = True
    await serving


if __name__ == "__main__":
    token = os.environ.get("PTC_UPSTREAM_TOKEN", "")
    if len(sys.argv) != 2 or not sys.argv[1].isdigit() or not token:
        sys.exit("usage: PTC_UPSTREAM_TOKEN=<token> http_time_server.py PORT")
    cert, key = os.environ.get("PTC_UPSTREAM_TLS_CERT"), os.environ.get("PTC_UPSTREAM_TLS_KEY")
    if bool(cert) != bool(key):
        sys.exit("error: PTC_UPSTREAM_TLS_CERT and PTC_UPSTREAM_TLS_KEY go together")
    asyncio.run(main(int(sys.argv[1]), token, (cert, key) if cert else None))
