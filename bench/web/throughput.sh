#!/usr/bin/env bash
# Measures terminal throughput through corral's dashboard: `cat` of a 50 MiB
# text file in a 120x40 shell session without a viewer, with a Go WebSocket
# client attached to the session's terminal, through gotty (bash on a bare
# PTY) and through gotty attached to the same tmux session, interleaved.
# Builds corral, then runs bench/web/throughput (flags pass through, e.g.
# -reps 15 -out r.md; -corral-b OTHER_CORRAL -b-note "..." measures a second
# corral build in the same interleaved rounds, for an A/B of a change).
# Takes about 2.5 minutes with the defaults (7 repetitions), 4.5 with
# -reps 15 and a -corral-b.
#
# gotty: the binary at $GOTTY, else a source tree at $GOTTY_SRC (default
# /tmp/gotty-src) built here, else `go install github.com/sorenisanerd/gotty`
# (the maintained fork) at $GOTTY_VERSION (default latest) through the module
# proxy. If none works the gotty runs are skipped and the report says so.
# docs/benchmarks.md says how the published figures got their gotty.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"
command -v tmux >/dev/null 2>&1 || { echo "throughput: tmux is missing (apt-get install -y tmux)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/corral-webtp-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/corral" ./cmd/corral
go build -o "$tmp/corral-hook" ./cmd/corral-hook
go build -o "$tmp/throughput" ./bench/web/throughput

gotty=() note="no gotty binary: set GOTTY or GOTTY_SRC"
src="${GOTTY_SRC:-/tmp/gotty-src}"
if [ -n "${GOTTY:-}" ]; then
  gotty=(-gotty "$GOTTY") note="binary $GOTTY"
elif [ -f "$src/go.mod" ]; then
  (cd "$src" && go build -o "$tmp/gotty" .)
  deps=$(go version -m "$tmp/gotty" | awk '$1 == "dep" {print $2 " " $3}' | paste -sd, - | sed 's/,/, /g')
  gotty=(-gotty "$tmp/gotty") note="sorenisanerd/gotty rebuilt from $src with $(go version | cut -d' ' -f3), linked modules: $deps"
elif GOBIN="$tmp" go install "github.com/sorenisanerd/gotty@${GOTTY_VERSION:-latest}" 2>"$tmp/gotty-install.log"; then
  gotty=(-gotty "$tmp/gotty") note="github.com/sorenisanerd/gotty@${GOTTY_VERSION:-latest} (go install)"
else
  note="no gotty: set GOTTY or GOTTY_SRC; go install failed: $(tail -1 "$tmp/gotty-install.log")"
fi
"$tmp/throughput" -corral "$tmp/corral" "${gotty[@]}" -gotty-note "$note" "$@"
