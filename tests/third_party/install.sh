#!/usr/bin/env bash
# Installs the third-party programs that the tests run against the gateway, from the pinned files in this
# repository only:
#   - config-examples/upstreams/.venv and config-examples/upstreams/node_modules: the examples' own
#     install, `bash config-examples/upstreams/install.sh`: the official time server `mcp-server-time`
#     with its closure, which holds the official `mcp` Python SDK that tests/third_party/python.rs and
#     tests/upstreams/http_time_server.py use (`pip install --require-hashes` of
#     config-examples/upstreams/requirements.txt), and the official reference server
#     `@modelcontextprotocol/server-everything`, a stdio upstream (`npm ci`);
#   - tests/typescript/node_modules: `npm ci` of tests/typescript/package-lock.json (the official MCP
#     TypeScript client SDK v2, `@modelcontextprotocol/client`, which speaks 2026-07-28; run with the `node`
#     on PATH, Node.js 20 or later);
#   - tests/conformance/node_modules: `npm ci` of tests/conformance/package-lock.json (the MCP
#     conformance suite and the Node.js 22 binary it needs, shipped as an npm package);
#   - tests/python/.venv: the test-only Python tools, `pip install --require-hashes` of
#     tests/python/requirements.txt (prometheus-client, whose text-format parser reads the metrics file in
#     tests/black_box/metrics.rs);
#   - config-examples/published-briefs/node_modules: the example's own install command, `npm ci` of its
#     package-lock.json (the official `@modelcontextprotocol/server-filesystem`), which its test runs.
# Idempotent: each part is skipped when a stamp records that the same pinned file was installed, so a
# second run reaches no registry. Run from anywhere; `.ci/run` runs it before the test command.
set -euo pipefail
cd "$(dirname "$0")/../.."

bash config-examples/upstreams/install.sh

stamp_of() { sha256sum "$1" | cut -d' ' -f1; }

venv=tests/python/.venv
want=$(stamp_of tests/python/requirements.txt)
if [[ -x $venv/bin/python && "$(cat $venv/.ptc-installed 2>/dev/null || true)" == "$want" ]]; then
  echo "test-only Python tools: up to date ($venv)"
else
  echo "test-only Python tools: installing into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --require-hashes \
    -r tests/python/requirements.txt
  echo "$want" > "$venv/.ptc-installed"
fi

# npm_ci DIR LABEL: `npm ci` in DIR unless its node_modules records the same package-lock.json.
npm_ci() {
  local dir=$1 label=$2 modules=$1/node_modules want
  want=$(stamp_of "$dir/package-lock.json")
  if [[ -d $modules && "$(cat "$modules/.ptc-installed" 2>/dev/null || true)" == "$want" ]]; then
    echo "$label: up to date ($modules)"
  else
    echo "$label: npm ci in $dir"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$want" > "$modules/.ptc-installed"
  fi
}

npm_ci tests/typescript "TypeScript client SDK"
npm_ci tests/conformance "conformance suite"
npm_ci config-examples/published-briefs "published-briefs example (server-filesystem)"
