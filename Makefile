# distscrape — `make demo` and `make test` do all the set-up on a fresh machine.
GO       ?= go
GOBIN    := $(shell $(GO) env GOPATH)/bin
export PATH := $(GOBIN):$(PATH)
BIN      := bin/distscrape
SUDO     := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
VERSITYGW_VERSION := v1.8.0
WARCIO_VERSION := 2.4.11
# warcio.js, the third reader of saver/warcsaver's WARC and WACZ tests
export WARCIO_JS ?= $(CURDIR)/bin/node/node_modules/warcio/dist/cli.js
# ReplayWeb.page's built viewer (ui.js, sw.js), which opens our WACZ in
# Chromium in test/e2e/replay_test.go
REPLAYWEBPAGE_VERSION := 2.5.3
export REPLAYWEBPAGE_DIR ?= $(CURDIR)/bin/node/replaywebpage
TEST_TIMEOUT ?= 40m

.PHONY: all build test test-short bench bench-broad bench-saver bench-tracker lint fuzz fuzz-smoke demo deps redis-server postgresql mariadb versitygw chromium warcio replaywebpage wget clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/distscrape

## deps: install the real servers the tests run against (never mocks: Redis,
## PostgreSQL, MariaDB, versitygw), and
## the browser that opens an offline mirror (test/e2e/chromium_test.go), and
## wget, the reference mirror beside ours (test/e2e/links_wget_test.go), and
## ReplayWeb.page, which replays our WACZ in that browser (test/e2e/replay_test.go)
deps: redis-server postgresql mariadb versitygw chromium warcio replaywebpage wget

wget:
	@command -v wget >/dev/null 2>&1 || { \
		echo "installing wget with apt-get (the reference mirror of the link tests)"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq wget; }

redis-server:
	@command -v redis-server >/dev/null 2>&1 || { \
		echo "installing redis-server with apt-get"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq redis-server; }

## postgresql: initdb and pg_ctl for the tests' private servers (internal/testkit/pgtest);
## Debian keeps them in /usr/lib/postgresql/<version>/bin, not in PATH
postgresql:
	@command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
		echo "installing postgresql with apt-get"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq postgresql; }

## mariadb: mariadb-install-db and mariadbd for the tests' private servers
## (internal/testkit/mariadbtest); Debian keeps mariadbd in /usr/sbin
mariadb:
	@{ command -v mariadbd || ls /usr/sbin/mariadbd; } >/dev/null 2>&1 || { \
		echo "installing mariadb-server with apt-get"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq mariadb-server; }

chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing chromium with apt-get (headless, for the offline mirror test)"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium; }

warcio:
	@[ -f $(WARCIO_JS) ] || { \
		echo "installing warcio.js $(WARCIO_VERSION) with npm into bin/node"; \
		mkdir -p bin/node && npm install --prefix bin/node --no-audit --no-fund -s warcio@$(WARCIO_VERSION); }

## replaywebpage: the package's built files only (npm pack): its sources'
## dependencies are not needed to run ui.js and sw.js
replaywebpage:
	@[ -f $(REPLAYWEBPAGE_DIR)/sw.js ] || { \
		echo "fetching ReplayWeb.page $(REPLAYWEBPAGE_VERSION) with npm pack into $(REPLAYWEBPAGE_DIR)"; \
		rm -rf $(REPLAYWEBPAGE_DIR) && mkdir -p $(REPLAYWEBPAGE_DIR) && \
		cd $(REPLAYWEBPAGE_DIR) && npm pack -s replaywebpage@$(REPLAYWEBPAGE_VERSION) >/dev/null && \
		tar -xzf replaywebpage-$(REPLAYWEBPAGE_VERSION).tgz --strip-components=1 package/ui.js package/sw.js package/LICENSE && \
		rm replaywebpage-$(REPLAYWEBPAGE_VERSION).tgz; }

versitygw:
	@command -v versitygw >/dev/null 2>&1 || { \
		echo "installing versitygw $(VERSITYGW_VERSION) (S3-compatible test server)"; \
		$(GO) install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION); }

## test: every test, with the race detector, against real redis-server and
## versitygw, then every fuzz target briefly (FUZZ_SMOKE each; 0 skips them)
FUZZ_SMOKE ?= 20s
test: deps
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...
	@if [ "$(FUZZ_SMOKE)" != 0 ]; then $(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZ_SMOKE); fi

test-short: deps
	$(GO) test -race -short -count=1 ./...

## bench: the main module's micro-benchmarks (briefly), then distscrape against
## Colly and asynq in one run on private local servers (bench/, BENCHMARKS.md):
## crawls, extraction (BENCH_FLAGS='-only extract' for it alone), record sinks,
## tracker lifecycle; tables in bin/bench-results.md, profiles in bin/bench-profiles/
BENCHTIME   ?= 100ms
BENCH_FLAGS ?= -rounds 3
bench: deps build
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) -benchmem ./...
	cd bench && $(GO) build -o ../bin/bench .
	bin/bench -distscrape $(BIN) -out bin/bench-results.md -profile bin/bench-profiles $(BENCH_FLAGS)

## bench-broad: distscrape (memory tracker; Redis, 2 workers) and Colly on a
## broad crawl: 2,000 small hosts and one big one on 127.x.y.z addresses,
## per_host_rate 2, concurrency 64, two seed orders; pace against the bound,
## small hosts' completion against the ideal, politeness violations, CPU
## (BENCHMARKS.md, "Broad crawl"); BROAD_FLAGS='-broad-hosts 200' for a quick one
BROAD_FLAGS ?=
bench-broad: redis-server build
	cd bench && $(GO) build -o ../bin/bench .
	bin/bench -distscrape $(BIN) -only broad -out bin/bench-broad.md $(BROAD_FLAGS)

## bench-saver: every saver (file, tar, Redis, S3, WARC) with 8 KiB pages: MB/s and items/s
bench-saver: deps
	$(GO) test -run '^$$' -bench . -benchtime 2s -benchmem ./saver/...

## bench-tracker: the Redis tracker at 10^7 items, against a private redis-server (a few minutes;
## ARGS="-only lifecycle" runs one figure; ARGS="-only hosts" the memory and Redis trackers
## with 10^6 hosts, which the whole run leaves out)
bench-tracker: redis-server
	$(GO) run ./internal/cmd/bench-tracker $(ARGS)

## fuzz: every fuzz target of the module (each func Fuzz...) for FUZZTIME each;
## internal/cmd/fuzz tells a real finding from Go 1.26's fuzz-deadline race
FUZZTIME ?= 30s
fuzz: redis-server
	$(GO) run ./internal/cmd/fuzz -fuzztime $(FUZZTIME)

## fuzz-smoke: every fuzz target for 20s (make test runs it last)
fuzz-smoke:
	$(MAKE) fuzz FUZZTIME=20s

## lint: gofmt, go vet, staticcheck (both modules), no unreachable function
## (deadcode, tests included), and both go.mod files tidy (no direct
## requirement left marked // indirect)
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
DEADCODE    := golang.org/x/tools/cmd/deadcode@v0.52.0
lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	cd bench && $(GO) vet ./... && $(GO) run $(STATICCHECK) ./...
	@dead="$$($(GO) run $(DEADCODE) -test ./...)"; test -z "$$dead" || { echo "$$dead"; echo "unreachable functions: remove them"; exit 1; }
	$(GO) mod tidy -diff
	cd bench && $(GO) mod tidy -diff

## demo: a real crawl of the shipped fixture site (memory tracker, file saver)
demo: build
	./examples/demo.sh

clean:
	rm -rf bin
