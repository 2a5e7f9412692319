#!/usr/bin/env bash
# Installs the relay the bench puts in front of the stdio fixture for comparison (docs/benchmarks.md,
# "Forward tool"): `mcp-proxy` from PyPI at the exact version pinned in benches/relay/requirements.txt
# (generated from requirements.in with pip-compile --generate-hashes; every package of the closure is
# pinned by version and hash), into a virtual environment under target/, so nothing outside the
# repository's build output is written or cached.
#
#   bash benches/relay/install.sh [VENV]     (default VENV: target/bench-relay/venv)
#
# Idempotent: skipped when the venv's stamp records the same requirements.txt, so a second run reaches no
# registry. `cargo bench --bench gateway` runs it when the relay is missing; on failure the bench reports
# the relay row as not measured, with this script's last error line.
set -euo pipefail
cd "$(dirname "$0")/../.."

venv=${1:-target/bench-relay/venv}
want=$(sha256sum benches/relay/requirements.txt | cut -d' ' -f1)
if [[ -x $venv/bin/mcp-proxy && "$(cat "$venv/.ptc-installed" 2>/dev/null || true)" == "$want" ]]; then
  echo "relay (mcp-proxy): up to date ($venv)"
  exit 0
fi
echo "relay (mcp-proxy): installing into $venv"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir --no-deps --require-hashes \
  -r benches/relay/requirements.txt
echo "$want" > "$venv/.ptc-installed"
