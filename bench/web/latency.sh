#!/usr/bin/env bash
# Measures how long a session's status change takes to reach a browser
# connected to corral's dashboard: a real `corral serve`, a shell session, the
# hook spawned exactly as Claude Code runs it (corral-hook, exec form), and the
# change timed on a Go WebSocket client and in a headless Chromium page.
# Builds corral and corral-hook (next to each other, as installed), then runs
# bench/web/latency (flags pass through, e.g. -n 300 -spaced 30 -out r.md,
# -browser=false without Chromium). Takes about 40 seconds with the defaults.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"

tmp=$(mktemp -d /tmp/corral-weblat-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/corral" ./cmd/corral
go build -o "$tmp/corral-hook" ./cmd/corral-hook
go build -o "$tmp/latency" ./bench/web/latency
"$tmp/latency" -corral "$tmp/corral" "$@"
