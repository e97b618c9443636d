#!/usr/bin/env bash
# Measures the hub–agent round trip: small requests through `corral hub` to a
# `corral agent` over the WebSocket device link, next to the same requests to
# `corral serve` (in-memory link) and to the agent's own unix socket, and the
# link alone (internal/link's BenchmarkCall). Builds corral, then runs
# bench/hub/rtt (flags pass through, e.g. -n 1000 -out report.md). Loopback
# only; needs tmux. About a minute with the defaults.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"
command -v tmux >/dev/null 2>&1 || { echo "rtt: tmux is missing (apt-get install -y tmux)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/corral-rtt-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/corral" ./cmd/corral
go build -o "$tmp/rtt" ./bench/hub/rtt
"$tmp/rtt" -corral "$tmp/corral" "$@"
