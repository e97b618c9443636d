#!/usr/bin/env bash
# Runs every test: formatting and vet, unit tests with the race detector, a
# short fuzzing pass over every parser, and the end-to-end tests that drive
# the real Claude Code in real tmux (and, for the web UI, a real Chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
# The end-to-end tests must not skip quietly when claude or chromium is missing.
export CORRAL_REQUIRE_CLAUDE=1

echo "== gofmt, go vet"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './web/*'))
if [ -n "$unformatted" ]; then echo "gofmt needed:"; echo "$unformatted"; exit 1; fi
go vet ./...
echo "== staticcheck"
go run honnef.co/go/tools/cmd/staticcheck@${STATICCHECK_VERSION:-v0.8.2} ./...

echo "== web lint (biome, web/biome.jsonc)"
if [ ! -x web/node_modules/.bin/biome ]; then (cd web && npm ci --no-audit --no-fund --loglevel=error); fi
(cd web && npm run --silent lint)

echo "== unit and end-to-end tests (race detector)"
go test -race -count=1 -timeout 20m ./...

echo "== fuzzing (${FUZZTIME:=10s} per target)"
scripts/fuzz.sh "$FUZZTIME"
echo "== all tests passed"
