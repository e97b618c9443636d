#!/usr/bin/env bash
# Builds the web UI (web/) into internal/web/dist/, which the Go binary embeds.
#   1. npm ci, when node_modules is missing or package-lock.json changed since the last install
#   2. the wire types from the Go ones (internal/tsgen writes web/src/api.gen.ts)
#   3. type-check (tsc --noEmit, strict; the page and the service worker)
#   4. bundle with esbuild (web/build.mjs)
# Usage: scripts/build-web.sh [--dev]   (--dev: unminified, with source maps)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root/web"

command -v node >/dev/null || { echo "build-web: node is not installed (Node 20+ is needed)" >&2; exit 1; }
command -v npm >/dev/null || { echo "build-web: npm is not installed" >&2; exit 1; }

stamp=node_modules/.corral-lock.sha256
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [[ ! -d node_modules || ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
	echo "build-web: npm ci"
	npm ci --no-audit --no-fund --loglevel=error
	echo "$want" >"$stamp"
fi

echo "build-web: wire types"
if command -v go >/dev/null; then
	(cd "$root" && go run ./internal/tsgen -api internal/api -o web/src/api.gen.ts)
else
	echo "build-web: go is not installed; using the committed src/api.gen.ts" >&2
fi

echo "build-web: type-check"
npx --no-install tsc --noEmit -p tsconfig.json
npx --no-install tsc --noEmit -p tsconfig.sw.json

echo "build-web: bundle"
mkdir -p "$root/internal/web/dist"
touch "$root/internal/web/dist/.keep"
node build.mjs "$@"
