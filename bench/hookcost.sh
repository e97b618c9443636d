#!/usr/bin/env bash
# Measures the cost of one hook call as Claude Code makes it (corral-hook, exec
# form), next to `corral hook` through sh, a
# sh+curl hook script and the floor (sh, /bin/true, an empty Go binary).
# Builds corral (and, for comparison, a CGO_ENABLED=0 build) into a temporary directory, then runs
# bench/hookcost (flags pass through, e.g. -n 300 -spaced 30 -out report.md).
# Takes about 6 minutes with the defaults (300 back-to-back calls per command
# and 30 calls per command one second apart).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"

if ! command -v curl >/dev/null 2>&1; then
  echo "hookcost: installing curl" >&2
  if [ "$(id -u)" -eq 0 ]; then apt-get install -y -q curl >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q curl >/dev/null; }
  else sudo apt-get install -y -q curl >/dev/null; fi
fi

tmp=$(mktemp -d /tmp/corral-hookcost-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/corral" ./cmd/corral
go build -o "$tmp/corral-hook" ./cmd/corral-hook
go build -o "$tmp/empty" ./bench/hookcost/empty
go build -o "$tmp/hookcost" ./bench/hookcost
# What-ifs, measured next to the real thing: corral without cgo (a static
# binary).
CGO_ENABLED=0 go build -o "$tmp/corral-static" ./cmd/corral
"$tmp/hookcost" -corral "$tmp/corral" -corral-hook "$tmp/corral-hook" -empty "$tmp/empty" -corral-static "$tmp/corral-static" "$@"
