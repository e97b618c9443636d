#!/usr/bin/env bash
# Measures the corral daemon at idle: CPU, memory, threads, wakeups and the
# processes it spawns, with no session and with 20 idle Claude Code sessions
# (real claude in tmux, fake model API). Builds corral, installs strace if it
# is missing, then runs bench/idle (flags pass through, e.g. -sessions 20
# -window 60s -out report.md). Takes about 6 minutes with the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"

for tool in strace tmux; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "idle: installing $tool" >&2
    if [ "$(id -u)" -eq 0 ]; then apt-get install -y -q "$tool" >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q "$tool" >/dev/null; }
    else sudo apt-get install -y -q "$tool" >/dev/null; fi
  fi
done
command -v claude >/dev/null 2>&1 || { echo "idle: claude is missing (scripts/setup.sh installs it)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/corral-idle-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/corral" ./cmd/corral
go build -o "$tmp/idle" ./bench/idle
"$tmp/idle" -corral "$tmp/corral" "$@"
