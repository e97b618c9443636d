#!/usr/bin/env bash
# Installs what corral needs on this machine, if it is missing: tmux, Node.js
# with npm (for the web UI build and Claude Code), Claude Code itself, and,
# with --test, what the tests need (Chromium for the browser tests,
# PostgreSQL for the store's and the hub's, nats-server for a hub of
# several replicas).
# Debian/Ubuntu get packages through apt (as root or with sudo); elsewhere it
# says what to install.
set -euo pipefail

want_test=0
[ "${1:-}" = "--test" ] && want_test=1

CLAUDE_CODE_VERSION="${CLAUDE_CODE_VERSION:-2.1.197}"

have() { command -v "$1" >/dev/null 2>&1; }
say() { printf 'setup: %s\n' "$*" >&2; }

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if have sudo; then sudo_cmd=(sudo); fi
fi

apt_install() {
  if ! have apt-get; then
    say "please install: $* (no apt-get here)"
    return 1
  fi
  if [ "$(id -u)" -ne 0 ] && [ ${#sudo_cmd[@]} -eq 0 ]; then
    say "please install as root: apt-get install $*"
    return 1
  fi
  say "installing $* with apt-get"
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/dev/null ||
    { "${sudo_cmd[@]}" apt-get update -q >/dev/null && "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/dev/null; }
}

missing=()
have tmux || missing+=(tmux)
have node || missing+=(nodejs)
have npm || missing+=(npm)
have make || missing+=(make)
if [ $want_test -eq 1 ]; then
  have chromium || missing+=(chromium)
  have git || missing+=(git)
  # internal/service checks its units with systemd-analyze; test/release
  # unpacks the .deb with dpkg.
  have systemd-analyze || missing+=(systemd)
  have dpkg || missing+=(dpkg)
  # internal/store/postgres and the hub's E2E test run a throwaway
  # PostgreSQL cluster (internal/testkit/pgtest); Debian keeps its
  # binaries in /usr/lib/postgresql/N/bin.
  if ! have initdb && ! compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then
    missing+=(postgresql)
  fi
  # A hub of several replicas routes over NATS; its tests run a real
  # nats-server (internal/testkit/natstest).
  if ! have nats-server && [ ! -x /usr/sbin/nats-server ]; then
    missing+=(nats-server)
  fi
fi
if [ ${#missing[@]} -gt 0 ]; then
  apt_install ca-certificates "${missing[@]}"
fi

if ! have go; then
  if [ -x /usr/local/go/bin/go ]; then
    say "Go is at /usr/local/go/bin; add it to PATH"
  else
    say "please install Go 1.26 or newer: https://go.dev/dl/"
  fi
  exit 1
fi

if ! have claude; then
  say "installing Claude Code ${CLAUDE_CODE_VERSION} with npm"
  npm_prefix_cmd=()
  if [ "$(id -u)" -ne 0 ] && [ ! -w "$(npm prefix -g)/lib" ]; then
    npm_prefix_cmd=("${sudo_cmd[@]}")
  fi
  "${npm_prefix_cmd[@]}" npm install -g --no-fund --no-audit "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}" >/dev/null
fi

# With --test: the download tests (internal/fetch) run against a real S3
# server, Versity S3 Gateway; install it into $(go env GOPATH)/bin, where the
# tests look for it, unless it is there or on PATH already.
VERSITYGW_VERSION="${VERSITYGW_VERSION:-v1.8.0}"
vgw_bin="$(go env GOPATH | cut -d: -f1)/bin"
if [ $want_test -eq 1 ] && ! have versitygw && [ ! -x "$vgw_bin/versitygw" ]; then
  say "installing versitygw ${VERSITYGW_VERSION} into $vgw_bin with go install"
  GOBIN="$vgw_bin" go install "github.com/versity/versitygw/cmd/versitygw@${VERSITYGW_VERSION}"
fi

say "ok: $(tmux -V), node $(node --version), claude $(claude --version 2>/dev/null | head -1)"
