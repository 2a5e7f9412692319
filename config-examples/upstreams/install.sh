#!/usr/bin/env bash
# Installs the upstream MCP servers that the examples launch through bin/ (two-upstreams, agent, debug),
# from the pinned files of this directory, into this directory only.
#
# Usage: install.sh [time] [everything] (both when none is named)
#   - time: into .venv, the official time server `mcp-server-time` and its whole closure (the `mcp`
#     Python SDK among it), `pip install --require-hashes` of requirements.txt (generated from
#     requirements.in with pip-compile --generate-hashes); needs `python3` with its venv module;
#   - everything: into node_modules, `npm ci` of package-lock.json (the official reference server
#     `@modelcontextprotocol/server-everything`); needs `node` 20 or later and `npm`.
# Idempotent: a part is skipped when its stamp records that the same pinned file was installed, so a second
# run reaches no registry. Run from anywhere, e.g. `bash ../upstreams/install.sh` from an example.
set -euo pipefail
cd "$(dirname "$0")"

# installed FILE DIR: whether DIR holds an install of exactly this FILE (its digest in DIR/.ptc-installed).
installed() {
  [[ "$(cat "$2/.ptc-installed" 2>/dev/null || true)" == "$(sha256sum "$1" | cut -d' ' -f1)" ]]
}
# stamp FILE DIR: records that DIR now holds an install of FILE; written last, so a failed install is
# retried by the next run.
stamp() { sha256sum "$1" | cut -d' ' -f1 > "$2/.ptc-installed"; }

install_time() {
  if [[ -x .venv/bin/python ]] && installed requirements.txt .venv; then
    echo "mcp-server-time: up to date ($PWD/.venv)"
    return
  fi
  echo "mcp-server-time: installing into $PWD/.venv"
  rm -rf .venv
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check --no-deps --require-hashes -r requirements.txt
  stamp requirements.txt .venv
}

install_everything() {
  if installed package-lock.json node_modules; then
    echo "server-everything: up to date ($PWD/node_modules)"
    return
  fi
  echo "server-everything: npm ci in $PWD"
  npm ci --no-audit --no-fund --loglevel=error
  stamp package-lock.json node_modules
}

[[ $# -gt 0 ]] || set -- time everything
for part in "$@"; do
  case $part in
    time) install_time ;;
    everything) install_everything ;;
    *) echo "install.sh: unknown part '$part' (want time or everything)" >&2; exit 2 ;;
  esac
done
