#!/usr/bin/env bash
# `make bench`: runs corral's measurements one after another (never in
# parallel: they would disturb each other) and writes each markdown report to
# $BENCH_OUT (default: a new directory under /tmp). About 30 minutes in all.
# See bench/README.md; the published figures are in docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${BENCH_OUT:-$(mktemp -d /tmp/corral-bench-XXXXXX)}"
mkdir -p "$out"
echo "== hook cost (bench/hookcost.sh)"
bench/hookcost.sh -out "$out/hookcost.md"
echo "== idle daemon (bench/idle.sh)"
bench/idle.sh -out "$out/idle.md"
echo "== status latency (bench/latency.sh)"
bench/latency.sh -out "$out/latency.md"
echo "== status to the browser (bench/web/latency.sh)"
bench/web/latency.sh -out "$out/web-latency.md"
echo "== terminal throughput (bench/web/throughput.sh)"
bench/web/throughput.sh -out "$out/web-throughput.md"
echo "== tmux client cost during a flood (bench/web/tmuxclient.sh)"
bench/web/tmuxclient.sh -out "$out/tmuxclient.md"
echo "== hub round trip (bench/hub/rtt.sh)"
bench/hub/rtt.sh -out "$out/hub-rtt.md"
echo "== hub capacity (bench/hub/load.sh)"
bench/hub/load.sh -out "$out/hub-load.md"
echo "== exit after SIGTERM, busy (bench/shutdown.sh)"
bench/shutdown.sh -out "$out/shutdown.md"
echo "== reports in $out"
