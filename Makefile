# One command to set up and try torchwise, one to run every test:
#   make demo    # a light venv of its own (torchwise and its runtime dependencies, no torch) + `torchwise check examples/`
#   make test    # venv + npm packages + Python tests + client tests
#   make test-editors  # real VS Code (code-server) and Neovim end to end (installs them first)
#   make fuzz    # the long fuzz (make test runs a small seeded budget of it)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The demo's own venv: only what `torchwise` needs at run time (pygls, lsprotocol, libcst, pathspec; ~4 MB),
# never torch or the test tools, so a first `make demo` takes seconds. Editable: it runs this checkout.
DEMO_VENV := .venv-demo
DEMO_STAMP := $(DEMO_VENV)/.installed

.PHONY: demo setup test test-python test-client test-editors editors-install bench bench-quick bench-scale fuzz clean

setup: $(STAMP) node_modules/.package-lock.json

$(STAMP): pyproject.toml constraints.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund

$(DEMO_STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(DEMO_VENV)
	$(DEMO_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e .
	touch $(DEMO_STAMP)

# `check` exits 1 when it finds something, which is the point of the demo.
demo: $(DEMO_STAMP)
	$(DEMO_VENV)/bin/torchwise check examples/ || [ $$? -eq 1 ]

test: test-python test-client

test-python: $(STAMP)
	$(BIN)/python -m pytest -m "not editor"

test-client: node_modules/.package-lock.json
	npm test
	npm run build

# Real editors (Neovim, VS Code as code-server in Chromium): Debian packages and npm installs, ~2.5 min once.
editors-install:
	scripts/editors/install.sh

test-editors: $(STAMP) node_modules/.package-lock.json editors-install
	scripts/editors/run.sh

# Every character prefix of the examples, analysed as typed, 20,000 generated programs and 3,000 garbage
# JSON-RPC frames (about half an hour on 2 cores); TORCHWISE_FUZZ_PROGRAMS and TORCHWISE_FUZZ_SEED change
# the budget and the seed.
fuzz: $(STAMP)
	TORCHWISE_FUZZ=long $(BIN)/python -m pytest -q -s tests/test_fuzz.py tests/test_hardening_lsp.py

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_server.py

bench-quick: $(STAMP)
	$(BIN)/python benchmarks/bench_server.py --quick

# Issue 13's scale budgets (200k-line file, 1,000-cell notebook): minutes while the edit path is not yet
# proportional, so apart from `bench`.
bench-scale: $(STAMP)
	$(BIN)/python benchmarks/bench_scale.py

clean:
	rm -rf $(VENV) $(DEMO_VENV) .torchwise_cache node_modules dist out .pytest_cache .hypothesis
