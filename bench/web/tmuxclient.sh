#!/usr/bin/env bash
# Measures what one attached tmux client costs the tmux server during a
# flood, without corral: a 50 MiB cat in a 120x40 pane with no client, a
# rendered client read fast, slowly or not at all, a client suspended
# during the flood (as corral's terminal streams do) and a control-mode
# client, interleaved. Flags pass through (-reps 9 -variants ... -out r.md).
# Takes about 2 minutes with the defaults.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"
command -v tmux >/dev/null 2>&1 || { echo "tmuxclient: tmux is missing (apt-get install -y tmux)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/corral-tmuxclient-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/tmuxclient" ./bench/web/tmuxclient
"$tmp/tmuxclient" "$@"
