# ccscope — see README.md. `make demo` and `make test` are the two commands a
# newcomer runs; both install what they need.

GO      ?= go
BIN     := bin/ccscope
GOFILES := $(shell find engine server -name '*.go' 2>/dev/null)

.PHONY: build test test-go bench demo lint clean

build: $(BIN)

$(BIN): $(GOFILES) go.mod go.sum
	$(GO) build -o $(BIN) ./server/cmd/ccscope

test: lint test-go

test-go:
	$(GO) test ./...

# Default benchtime with three counts: the whole-run benchmarks (seconds per
# iteration) run once per count, the micro-benchmarks long enough to mean
# something (at -benchtime 3x they timed 3 iterations); benchstat takes the
# three lines' median. About 1.5 minutes.
bench:
	$(GO) test -run '^$$' -bench . -count 3 ./...

demo: build
	$(BIN) scenarios
	$(BIN) run pump

lint:
	@out=$$(gofmt -l engine server); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf bin build
