#!/usr/bin/env bash
# Installs the third-party programs that tests/third_party runs against the gateway, from the pinned
# files in this repository only:
#   - tests/python/.venv: the official `mcp` Python SDK and the official time server `mcp-server-time`
#     (same closure), `pip install --require-hashes` of tests/python/requirements.txt (generated from
#     requirements.in with pip-compile --generate-hashes);
#   - tests/typescript/node_modules: `npm ci` of tests/typescript/package-lock.json (the official MCP
#     TypeScript client SDK v2, `@modelcontextprotocol/client`, which speaks 2026-07-28; run with the `node`
#     on PATH, Node.js 20 or later);
#   - tests/conformance/node_modules: `npm ci` of tests/conformance/package-lock.json (the MCP
#     conformance suite and the Node.js 22 binary it needs, shipped as an npm package);
#   - tests/upstreams/everything/node_modules: `npm ci` of tests/upstreams/everything/package-lock.json
#     (the official reference server `@modelcontextprotocol/server-everything`, a stdio upstream);
#   - config-examples/published-briefs/node_modules: the example's own install command, `npm ci` of its
#     package-lock.json (the official `@modelcontextprotocol/server-filesystem`), which its test runs.
# Idempotent: each part is skipped when a stamp records that the same pinned file was installed, so a
# second run reaches no registry. Run from anywhere; `.ci/run` runs it before the test command.
set -euo pipefail
cd "$(dirname "$0")/../.."

stamp_of() { sha256sum "$1" | cut -d' ' -f1; }

venv=tests/python/.venv
want=$(stamp_of tests/python/requirements.txt)
if [[ -x $venv/bin/python && "$(cat $venv/.ptc-installed 2>/dev/null || true)" == "$want" ]]; then
  echo "python venv (mcp SDK, mcp-server-time): up to date ($venv)"
else
  echo "python venv (mcp SDK, mcp-server-time): installing into $venv"
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
npm_ci tests/upstreams/everything "server-everything upstream"
npm_ci config-examples/published-briefs "published-briefs example (server-filesystem)"
