#!/usr/bin/env bash
# Installs the third-party programs that tests/third_party runs against the gateway, from the pinned
# files in this repository only:
#   - tests/python/.venv: the official `mcp` Python SDK, `pip install --require-hashes` of
#     tests/python/requirements.txt (generated from requirements.in with pip-compile --generate-hashes);
#   - tests/conformance/node_modules: `npm ci` of tests/conformance/package-lock.json (the MCP
#     conformance suite and the Node.js 22 binary it needs, shipped as an npm package).
# Idempotent: each part is skipped when a stamp records that the same pinned file was installed, so a
# second run reaches no registry. Run from anywhere; `.ci/run` runs it before the test command.
set -euo pipefail
cd "$(dirname "$0")/../.."

stamp_of() { sha256sum "$1" | cut -d' ' -f1; }

venv=tests/python/.venv
want=$(stamp_of tests/python/requirements.txt)
if [[ -x $venv/bin/python && "$(cat $venv/.ptc-installed 2>/dev/null || true)" == "$want" ]]; then
  echo "python client: up to date ($venv)"
else
  echo "python client: installing into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --require-hashes \
    -r tests/python/requirements.txt
  echo "$want" > "$venv/.ptc-installed"
fi

modules=tests/conformance/node_modules
want=$(stamp_of tests/conformance/package-lock.json)
if [[ -d $modules && "$(cat $modules/.ptc-installed 2>/dev/null || true)" == "$want" ]]; then
  echo "conformance suite: up to date ($modules)"
else
  echo "conformance suite: npm ci in tests/conformance"
  (cd tests/conformance && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" > "$modules/.ptc-installed"
fi
