#!/usr/bin/env bash
# Runs `ptc gateway` from a source checkout: builds the binary if needed, then execs it, so that the
# gateway *is* this process. SIGINT and SIGTERM from a terminal or a service manager then reach it directly
# and start the same staged shutdown as for an installed binary (docs/spec/lifecycle.md §8), and the exit
# status is the gateway's (docs/spec/lifecycle.md §2.2).
#
# Usage: scripts/run-gateway-source.sh CONFIG [--env-file FILE]
#   PTC_SOURCE_PROFILE  release (default) or dev: the cargo profile to build and run.
#   CARGO_TARGET_DIR    honoured as cargo honours it.
set -euo pipefail

usage() {
  echo "usage: scripts/run-gateway-source.sh CONFIG [--env-file FILE]" >&2
  exit 2
}

[ "$#" -ge 1 ] || usage
case "$1" in -h | --help) usage ;; esac

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
case "${PTC_SOURCE_PROFILE:-release}" in
  release) build=(--release) binary="$target/release/ptc" ;;
  dev) build=() binary="$target/debug/ptc" ;;
  *) echo "PTC_SOURCE_PROFILE must be release or dev" >&2; exit 2 ;;
esac

# Cargo does nothing when the binary is current; it writes to stderr only while it compiles.
cargo build --manifest-path "$root/Cargo.toml" --locked --quiet --bin ptc "${build[@]}" >&2
exec "$binary" gateway "$@"
