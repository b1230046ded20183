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

bench:
	$(GO) test -run '^$$' -bench . -benchtime 3x ./...

demo: build
	$(BIN) scenarios
	$(BIN) run pump

lint:
	@out=$$(gofmt -l engine server); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf bin build
