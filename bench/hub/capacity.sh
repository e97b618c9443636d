#!/usr/bin/env bash
# Measures a hub at the scale of issue 12 (bench/hub/capacity): agents with
# 10 sessions each and browsers, on one SQLite hub (-replicas 1) or two
# replicas on PostgreSQL and NATS (-replicas 2; needs PostgreSQL's and
# nats-server's binaries: scripts/setup.sh --test), then a reconnect storm
# (SIGKILL). Builds corral, then runs it; flags pass through. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"
# Each end holds a file per connection: the soft limit up to the hard one.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
tmp=$(mktemp -d /tmp/corral-capacity-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/corral" ./cmd/corral
go build -o "$tmp/capacity" ./bench/hub/capacity
"$tmp/capacity" -corral "$tmp/corral" "$@"
