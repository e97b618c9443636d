#!/usr/bin/env bash
# Builds corral's release into dist/: static binaries (corral and
# corral-hook, the web UI embedded) for each target, a .tar.gz of each,
# .deb and .rpm packages for the Linux targets, and SHA256SUMS.
#
#   scripts/release.sh                     every target, every package
#   TARGETS=linux/amd64 PACKAGERS=deb scripts/release.sh    what the release test needs
#
# Environment:
#   VERSION    the version to stamp (default: the exact git tag, else a
#              pseudo-version v0.0.0-<commit time>-<commit>, as Go makes them)
#   TARGETS    GOOS/GOARCH list (default: linux and darwin x amd64 and arm64)
#   PACKAGERS  nfpm packagers for the Linux targets (default: deb rpm; "" for none)
#   DIST       output directory (default: dist)
#   SKIP_WEB=1 use the web UI already in internal/web/dist
#
# Packages are made by nfpm, run with `go run` at a pinned version: its
# dependencies (rpm, archive and signing libraries) stay out of corral's
# go.mod, and the Go checksum database pins the code just as go.sum would.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"

NFPM="github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2"
TARGETS="${TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}"
PACKAGERS="${PACKAGERS-deb rpm}"
DIST="${DIST:-dist}"
mkdir -p "$DIST"
DIST="$(cd "$DIST" && pwd)"

say() { printf 'release: %s\n' "$*" >&2; }

commit="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
# The commit's own time, not the clock: the same commit builds the same
# binaries and packages (SOURCE_DATE_EPOCH is what nfpm and tar take).
epoch="$(git log -1 --format=%ct 2>/dev/null || date +%s)"
date="$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r "$epoch" +%Y-%m-%dT%H:%M:%SZ)"
dirty=""
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then dirty=".dirty"; fi
if [ -z "${VERSION:-}" ]; then
	if tag="$(git describe --tags --exact-match 2>/dev/null)"; then
		VERSION="$tag"
	else
		VERSION="v0.0.0-$(date -u -d "@$epoch" +%Y%m%d%H%M%S 2>/dev/null || date -u -r "$epoch" +%Y%m%d%H%M%S)-${commit:0:12}"
	fi
	VERSION="$VERSION$dirty"
fi
export SOURCE_DATE_EPOCH="$epoch"
say "corral $VERSION (commit $commit, $date) into $DIST"

if [ "${SKIP_WEB:-}" != 1 ]; then
	scripts/build-web.sh >&2
fi
[ -f internal/web/dist/index.html ] || { say "the web UI is not built: run scripts/build-web.sh (make web)"; exit 1; }

pkg=github.com/corral-dev/corral/internal/version
ldflags="-s -w -X $pkg.version=$VERSION -X $pkg.commit=$commit -X $pkg.date=$date"

# Completions and units come from a corral that runs here.
host="$DIST/.host"
mkdir -p "$host"
go build -trimpath -ldflags "$ldflags" -o "$host/corral" ./cmd/corral
gen="$DIST/.generated"
rm -rf "$gen" && mkdir -p "$gen/completions" "$gen/systemd" "$gen/doc"
"$host/corral" completion bash >"$gen/completions/corral.bash"
"$host/corral" completion zsh >"$gen/completions/_corral"
"$host/corral" completion fish >"$gen/completions/corral.fish"
"$host/corral" service print serve --os linux --package >"$gen/systemd/corral-serve.service"
"$host/corral" service print hub --os linux --package >"$gen/systemd/corral-hub.service"
cp packaging/corral.sysusers "$gen/systemd/corral.sysusers"
cp README.md "$gen/doc/"
cp docs/*.md "$gen/doc/"
chmod 0644 "$gen"/*/*

artifacts=()
for target in $TARGETS; do
	goos="${target%/*}" goarch="${target#*/}"
	name="corral_${VERSION#v}_${goos}_${goarch}"
	stage="$DIST/$name"
	rm -rf "$stage" && mkdir -p "$stage"
	say "build $target"
	CGO_ENABLED=0 GOOS="$goos" GOARCH="$goarch" \
		go build -trimpath -ldflags "$ldflags" -o "$stage/" ./cmd/corral ./cmd/corral-hook
	cp -r "$gen/completions" "$gen/systemd" "$gen/doc" "$stage/"
	tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner \
		-C "$DIST" -czf "$DIST/$name.tar.gz" "$name"
	artifacts+=("$name.tar.gz")
	if [ "$goos" = linux ]; then
		for p in $PACKAGERS; do
			say "package $target $p"
			before="$(ls "$DIST")"
			ARCH="$goarch" VERSION="$VERSION" STAGE="$stage" \
				go run "$NFPM" package --config packaging/nfpm.yaml --packager "$p" --target "$DIST/" >&2
			for f in $(ls "$DIST"); do
				if ! grep -qxF "$f" <<<"$before"; then artifacts+=("$f"); fi
			done
		done
	fi
done

(cd "$DIST" && sha256sum "${artifacts[@]}" >SHA256SUMS)
rm -rf "$host" "$gen"
say "done:"
(cd "$DIST" && ls -l "${artifacts[@]}" SHA256SUMS) >&2
