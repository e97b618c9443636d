#!/usr/bin/env bash
# Measures how long corral serve, corral hub and corral agent take to exit
# after SIGTERM with busy Claude sessions and viewers attached, and checks
# that the sessions survive. Builds corral and corral-hook (next to each
# other, as installed), then runs bench/shutdown (flags pass through, e.g.
# -runs 5 -sessions 2 -cases serve,hub,agent -out report.md). Needs tmux and
# Claude Code; loopback only. About 2 minutes with the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
command -v tmux >/dev/null 2>&1 || { echo "shutdown: tmux is missing (apt-get install -y tmux)" >&2; exit 1; }
command -v claude >/dev/null 2>&1 || { echo "shutdown: claude is missing (scripts/setup.sh installs it)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/corral-shutdown-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/corral" ./cmd/corral
go build -o "$tmp/corral-hook" ./cmd/corral-hook
go build -o "$tmp/shutdown" ./bench/shutdown
"$tmp/shutdown" -corral "$tmp/corral" "$@"
