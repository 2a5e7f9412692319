#!/usr/bin/env bash
# Installs the second relay the bench puts in front of the stdio fixture for comparison (docs/benchmarks.md,
# "Forward tool"): `supergateway` from npm at the exact version pinned in benches/supergateway/package.json,
# with its whole closure pinned by benches/supergateway/package-lock.json (`npm ci`), into a directory
# under target/; npm's cache goes there too, so nothing outside the repository's build output is written.
#
#   bash benches/supergateway/install.sh [DIR]     (default DIR: target/bench-supergateway)
#
# Idempotent: skipped when DIR's stamp records the same package-lock.json, so a second run reaches no
# registry. `cargo bench --bench gateway` runs it when the relay is missing; on failure the bench reports
# the relay row as not measured, with this script's last error line.
set -euo pipefail
cd "$(dirname "$0")/../.."

dir=${1:-target/bench-supergateway}
want=$(sha256sum benches/supergateway/package-lock.json | cut -d' ' -f1)
if [[ -x $dir/node_modules/.bin/supergateway && "$(cat "$dir/.ptc-installed" 2>/dev/null || true)" == "$want" ]]; then
  echo "relay (supergateway): up to date ($dir)"
  exit 0
fi
command -v npm >/dev/null || { echo "npm is not on PATH (Node.js 20 or later is needed)"; exit 1; }
echo "relay (supergateway): installing into $dir"
rm -rf "$dir"
mkdir -p "$dir"
cp benches/supergateway/package.json benches/supergateway/package-lock.json "$dir/"
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error --cache "$PWD/.npm-cache")
rm -rf "$dir/.npm-cache"
echo "$want" > "$dir/.ptc-installed"
