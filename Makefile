# corral: `make run` sets up and runs the daemon; `make test` runs every test.
SHELL := /bin/bash
export PATH := /usr/local/go/bin:$(HOME)/go/bin:$(PATH)
GO ?= go
BIN := bin/corral

.PHONY: run build setup test test-short web bench fmt vet lint fuzz clean release release-test

run: setup build
	./$(BIN) serve

setup:
	@scripts/setup.sh

# corral-hook goes next to corral: Claude runs it for every hook event. The
# version, commit and date are stamped as a release build stamps them.
VPKG := github.com/corral-dev/corral/internal/version
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT := $(shell git rev-parse HEAD 2>/dev/null)
DATE := $(shell date -u -d @$$(git log -1 --format=%ct 2>/dev/null || date +%s) +%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
build: web
	$(GO) build -ldflags "-X $(VPKG).version=$(VERSION) -X $(VPKG).commit=$(COMMIT) -X $(VPKG).date=$(DATE)" -o bin/ ./cmd/corral ./cmd/corral-hook

# The web UI is bundled into internal/web/dist and embedded in the binary.
web:
	@if [ -f web/package.json ]; then scripts/build-web.sh; fi

test:
	scripts/setup.sh --test
	$(MAKE) web
	scripts/test.sh

test-short:
	$(GO) test -short -race ./...

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

# What CI checks besides the tests: gofmt, go vet, staticcheck, biome for web/.
lint: vet
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
	@if [ -x web/node_modules/.bin/biome ]; then cd web && npm run --silent lint; else echo "web lint: run make web first"; exit 1; fi

# Formats the Go code and the web UI's sources in place.
fmt:
	gofmt -w $$(git ls-files '*.go')
	@if [ -x web/node_modules/.bin/biome ]; then cd web && npm run --silent fmt; fi

# Each fuzz target for a while (FUZZTIME, default 10s).
fuzz:
	scripts/fuzz.sh $${FUZZTIME:-10s}

bench:
	scripts/bench.sh

# Static binaries for linux/darwin x amd64/arm64, .deb and .rpm, SHA256SUMS,
# into dist/ (docs/operations.md).
release: web
	SKIP_WEB=1 scripts/release.sh

# Builds the linux/amd64 .deb, unpacks it with dpkg -x and runs corral from it.
release-test: web
	$(GO) test -count=1 ./test/release/

clean:
	rm -rf bin dist
