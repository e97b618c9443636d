# corral: `make run` sets up and runs the daemon; `make test` runs every test.
SHELL := /bin/bash
export PATH := /usr/local/go/bin:$(HOME)/go/bin:$(PATH)
GO ?= go
BIN := bin/corral

.PHONY: run build setup test test-short web bench fmt vet fuzz clean

run: setup build
	./$(BIN) serve

setup:
	@scripts/setup.sh

# corral-hook goes next to corral: Claude runs it for every hook event.
build: web
	$(GO) build -o bin/ ./cmd/corral ./cmd/corral-hook

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

bench:
	scripts/bench.sh

clean:
	rm -rf bin
