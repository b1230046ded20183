# ccscope — see README.md. `make demo` and `make test` are the two commands a
# newcomer runs on a fresh machine; both install what they need (Go modules,
# a Python virtual environment with the client and its extras).

GO      ?= go
PYTHON  ?= python3
BIN     := bin/ccscope
VENV    := .venv
PY      := $(VENV)/bin/python
GOFILES := $(shell find engine server -name '*.go' 2>/dev/null)
PYFILES := $(shell find client-python/ccscope -name '*.py' 2>/dev/null)

.PHONY: build test test-go test-py bench bench-py demo lint clean venv soak

build: $(BIN)

$(BIN): $(GOFILES) go.mod go.sum
	$(GO) build -o $(BIN) ./server/cmd/ccscope

# The venv is rebuilt (pip install of the package, which compiles the Go
# server into it) whenever the client, the build hook or the Go sources change.
$(VENV)/.stamp: pyproject.toml client-python/hatch_build.py $(PYFILES) $(GOFILES) go.mod go.sum
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q '.[all,test]'
	touch $@

venv: $(VENV)/.stamp

test: lint test-go test-py

# The server's concurrency (one goroutine per session, shared connections)
# also runs under the race detector; the engine has no goroutines, nor do
# server/report and the pcap tests (whole simulations read back by Chromium
# and tshark, which the first pass runs and -race would only slow down).
test-go:
	$(GO) test ./...
	$(GO) test -race ./server ./server/cmd/... -skip Tshark

# The server soak (not part of test): 20 connections × 5 sessions stepping
# and streaming for 60 s, then closed; goroutines, fds and heap must come
# back to their baseline. About 1.5 minutes; prints its figures.
soak:
	$(GO) test -tags soak -run '^TestSoak$$' -v -count=1 -timeout 10m ./server

test-py: venv
	$(PY) -m pytest -q client-python/tests

# Default benchtime with three counts: the whole-run benchmarks (seconds per
# iteration) run once per count, the micro-benchmarks long enough to mean
# something (at -benchtime 3x they timed 3 iterations); benchstat takes the
# three lines' median. About 1.5 minutes.
bench:
	$(GO) test -run '^$$' -bench . -count 3 ./...

bench-py: venv
	$(PY) client-python/benchmarks/bench_flows_table.py

demo: build venv
	$(BIN) scenarios
	$(BIN) run p-rtr-p
	mkdir -p build
	$(VENV)/bin/jupyter nbconvert --to html --execute notebooks/01-quickstart.ipynb \
		--output-dir build --ExecutePreprocessor.timeout=300
	@echo
	@echo "demo: the executed quickstart notebook, with its plots, is $(CURDIR)/build/01-quickstart.html"

lint:
	@out=$$(gofmt -l engine server); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf bin build $(VENV) client-python/ccscope/_bin
