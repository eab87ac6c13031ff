# loki: build, test and benchmark. `make test` is what CI runs (.ci/run).
GO        ?= go
BIN       ?= bin
# The binaries name their build (--version): the commit, whether the tree
# was dirty, and the nearest v* tag. Stamped here, not by the toolchain,
# so that GOFLAGS=-buildvcs=false and git worktrees change nothing, and a
# release is the same bytes twice (no time is stamped).
VERSION_PKG := github.com/loki-sh/loki/cmd/internal/version
GIT_COMMIT  := $(shell git rev-parse HEAD 2>/dev/null)
GIT_DIRTY   := $(shell test -z "$$(git status --porcelain --untracked-files=no 2>/dev/null)" && echo false || echo true)
VERSION     ?= $(shell git describe --tags --match 'v[0-9]*' 2>/dev/null || echo devel)
STAMP       := -X $(VERSION_PKG).version=$(VERSION) -X $(VERSION_PKG).commit=$(GIT_COMMIT) -X $(VERSION_PKG).dirty=$(GIT_DIRTY)
GOFLAGS_B   := -trimpath -buildvcs=false -ldflags='-s -w $(STAMP)'
PKGS      := ./...
FUZZTIME  ?= 10s

.PHONY: all build static test unit fuzz bench soak vet fmt cross clean release

all: build

build:
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_B) -o $(BIN)/loki-init ./cmd/loki-init
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_B) -tags urfave_cli_no_docs -o $(BIN)/loki-supervise ./cmd/loki-supervise
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_B) -tags urfave_cli_no_docs -o $(BIN)/loki-kube ./cmd/loki-kube

# static proves loki-init has no dynamic section and reports its size.
static: build
	@if readelf -d $(BIN)/loki-init 2>/dev/null | grep -q 'Dynamic section'; then \
		echo "loki-init is dynamically linked" >&2; exit 1; fi
	@file $(BIN)/loki-init 2>/dev/null || true
	@echo "loki-init: static, $$(stat -c %s $(BIN)/loki-init) bytes"

# release: per-platform tarballs of the static binaries with their manual
# pages and completions, and SHA256SUMS, in $(RELEASE_DIR); reproducible
# (release/build.sh says how). RELEASE_PLATFORMS=linux/amd64 for one.
RELEASE_DIR       ?= dist
RELEASE_PLATFORMS ?= linux/amd64 linux/arm64 darwin/arm64
release:
	VERSION='$(VERSION)' STAMP='$(STAMP)' ./release/build.sh $(RELEASE_DIR) $(RELEASE_PLATFORMS)

vet:
	@test -z "$$(gofmt -l cmd internal bench test 2>/dev/null)" || { gofmt -l cmd internal bench test; echo "gofmt needed" >&2; exit 1; }
	$(GO) vet $(PKGS)

cross:
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) build ./...
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) vet ./...

# test: everything a new user and CI run: format, vet, darwin cross-build,
# the whole suite (unit + real PID-1 / namespace integration tests), and a
# short fuzz pass over every fuzz target. The integration packages run one
# at a time: each already loads both vCPUs (the soak alone runs 32 sessions),
# and two at once starved 3 s test leases into false 124s.
test: vet cross build static
	LOKI_BIN_DIR=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 15m ./cmd/... ./internal/... ./bench/...
	LOKI_BIN_DIR=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 15m -p 1 ./test/...
	$(MAKE) fuzz

unit:
	$(GO) test -count=1 -short $(PKGS)

# Go's fuzzer sometimes ends a loaded run with "context deadline exceeded"
# and no input at fault; one retry tells that apart from a real failure.
fuzz:
	@for spec in $$(grep -rl --include='*_test.go' '^func Fuzz' cmd internal 2>/dev/null | xargs -r -n1 dirname | sort -u); do \
		for f in $$(grep -h '^func Fuzz' $$spec/*_test.go | sed 's/func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
			echo "fuzz $$spec $$f ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) ./$$spec || \
			{ echo "fuzz $$f failed; once more (a real crasher is saved in testdata and fails again at once)"; \
			  $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) ./$$spec; } || exit 1; \
		done; \
	done

bench: build
	./bench/run.sh

soak: build
	./bench/soak.sh

clean:
	rm -rf $(BIN)
