#!/usr/bin/env bash
# Measures one `corral hub`'s capacity: fake agents over the real device link
# (each with a few sessions, then a stream of session events) and browser
# event subscribers, stepped up; reports the hub's memory and CPU and the
# event fan-out latency at each step. Builds corral, then runs bench/hub/load
# (flags pass through, e.g. -agents 10,100,500 -subs 10,100,1000 -out
# report.md). Loopback only. About 3 minutes with the defaults.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"
# Each end holds a file per connection: the soft limit up to the hard one.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
tmp=$(mktemp -d /tmp/corral-load-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/corral" ./cmd/corral
go build -o "$tmp/load" ./bench/hub/load
"$tmp/load" -corral "$tmp/corral" "$@"
