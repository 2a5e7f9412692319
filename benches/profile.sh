#!/usr/bin/env bash
# Where the time goes (issue 27, scope 8), on a release build, into docs/perf/:
#   - docs/perf/luau-echo-c16.svg: a flame graph of the gateway serving the Luau echo of the main table to
#     16 keep-alive connections back to back: `perf record -F 999 --call-graph dwarf -p PID` for
#     PTC_PROFILE_SECONDS (default 5) after a warm-up, then `perf script | inferno-collapse-perf |
#     inferno-flamegraph`. The call graph is `dwarf` because the release build keeps no frame pointers
#     (`-g`, that is `fp`, sees one frame or two); PTC_BENCH_CALL_GRAPH=fp selects the cheaper mode;
#   - docs/perf/syscalls.md: the system calls per request of `tools/list`, the Luau echo, the audited write
#     and the forward tool, each `strace -c -f -p PID` during 2,000 requests at concurrency 16.
# The deployments and the load are the bench's own (`PTC_BENCH_PROFILE=DIR cargo bench --bench gateway`,
# benches/gateway/profile.rs); this script installs the tools, runs that mode and renders its outputs.
#
#   bash benches/profile.sh          (about 2 to 3 minutes once built; the release build comes first)
#
# Needs `perf` and `strace` on PATH (Debian: `apt-get install -y linux-perf strace`). `inferno` (crates.io,
# pinned below) is installed into target/profile-tools on first use; nothing else is fetched.
set -euo pipefail
cd "$(dirname "$0")/.."

INFERNO_VERSION=0.12.8
tools=target/profile-tools
work=$PWD/target/profile
seconds=${PTC_PROFILE_SECONDS:-5}
call_graph=${PTC_BENCH_CALL_GRAPH:-dwarf}

for tool in perf strace; do
  command -v "$tool" >/dev/null || { echo "$tool is not on PATH: apt-get install -y linux-perf strace" >&2; exit 1; }
done
if [[ ! -x $tools/bin/inferno-flamegraph || "$(cat "$tools/.ptc-installed" 2>/dev/null || true)" != "$INFERNO_VERSION" ]]; then
  echo "installing inferno $INFERNO_VERSION into $tools"
  cargo install inferno --locked --version "$INFERNO_VERSION" --root "$tools" --target-dir "$tools/build"
  echo "$INFERNO_VERSION" > "$tools/.ptc-installed"
fi

rm -rf "$work"
mkdir -p "$work" docs/perf
PTC_BENCH_PROFILE=$work PTC_BENCH_SECONDS=$seconds PTC_BENCH_WARMUP=1 PTC_BENCH_CALL_GRAPH=$call_graph \
  cargo bench --locked --bench gateway

perf script -i "$work/perf.data" 2>/dev/null | "$tools/bin/inferno-collapse-perf" > "$work/stacks.folded"
"$tools/bin/inferno-flamegraph" \
  --title "ptc gateway: Luau echo tools/call at c=16 (release)" \
  --subtitle "perf record -F 999 --call-graph $call_graph -p PID for $seconds s under 16 keep-alive connections; made by bash benches/profile.sh" \
  < "$work/stacks.folded" > docs/perf/luau-echo-c16.svg
cp "$work/syscalls.md" docs/perf/syscalls.md
echo "wrote docs/perf/luau-echo-c16.svg and docs/perf/syscalls.md"
