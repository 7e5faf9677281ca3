# popmon: `make demo` sets up and measures the bundled example; `make test`
# runs the whole test suite (unit and end-to-end, Open MPI and MPICH) and the
# packaging check (Spack, EasyBuild, modules; scripts/packaging-check.sh).

GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
BIN := bin/popmon
EXAMPLES := build/examples

# Open MPI refuses to run as root without these; harmless otherwise.
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1

.PHONY: all deps deps-test build demo test test-unit packaging-check bench generate lint clean FORCE

all: build

deps:
	@./scripts/install-deps.sh

deps-test:
	@./scripts/install-deps.sh test

build: $(BIN)

$(BIN): FORCE
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/popmon

demo: deps build
	@./scripts/demo.sh $(BIN) $(EXAMPLES)

test: deps-test
	$(GO) vet ./...
	$(GO) test -count=1 -p 1 -timeout 40m ./...
	@./scripts/packaging-check.sh

# Installs popmon offline with Spack and EasyBuild from ../shared/packaging and
# measures a program through their modules (docs/install.md); `make test` runs it.
packaging-check:
	@./scripts/packaging-check.sh

test-unit:
	$(GO) test -short ./...

bench: deps build
	@./scripts/bench.sh $(BIN)
	@./scripts/bench-import.sh $(BIN)
	@cat build/bench/import.md >> BENCHMARKS.md
	@./scripts/bench-finalize.sh $(BIN)
	@cat build/bench/finalize.md >> BENCHMARKS.md
	@./scripts/bench-series.sh $(BIN) > build/bench/series.md && cat build/bench/series.md >> BENCHMARKS.md

generate:
	$(GO) generate ./shim/gen

lint:
	gofmt -l . | (! grep .)
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

clean:
	rm -rf bin build
