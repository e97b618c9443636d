#!/usr/bin/env bash
# Measures how long after Claude Code's permission dialog opens corral's event
# stream reports the session as needs-input (real claude in tmux, fake model
# API). Builds corral, then runs bench/latency (flags pass through, e.g.
# -runs 10 -out report.md). Takes about a minute with the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
command -v tmux >/dev/null 2>&1 || { echo "latency: tmux is missing (apt-get install -y tmux)" >&2; exit 1; }
command -v claude >/dev/null 2>&1 || { echo "latency: claude is missing (scripts/setup.sh installs it)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/corral-latency-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/corral" ./cmd/corral
go build -o "$tmp/latency" ./bench/latency
"$tmp/latency" -corral "$tmp/corral" "$@"
