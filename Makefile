# perfledger — `make help` lists the targets.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.DEFAULT_GOAL := help
.PHONY: help setup run test lint refresh serve validate bench clean browser

help: ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-10s %s\n", $$1, $$2}'

$(STAMP): requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

setup: $(STAMP) ## create .venv and install the exact versions in requirements.lock

run: setup ## refresh the warehouse (a failed source is reported, last good data kept), serve the API on 127.0.0.1:8000, say where and what loaded
	$(BIN)/perfledger run

browser: ## install Debian's chromium for the explorer page's browser test (skipped without it)
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) ; } || \
	  echo "chromium not installed: the browser test will be skipped" >&2

test: setup browser ## run the whole test suite
	$(BIN)/python -m pytest -n 2

lint: setup ## ruff, mypy and the import-linter contracts (layers point one way)
	$(BIN)/ruff check ingest warehouse api cli tests tools
	$(BIN)/mypy ingest warehouse api cli
	$(BIN)/lint-imports

refresh: setup ## pull every source, validate, publish a new snapshot (or nothing, saying why)
	$(BIN)/perfledger refresh

serve: setup ## serve the API over the current snapshot
	$(BIN)/perfledger serve

validate: setup ## run the validation suites over the current snapshot
	$(BIN)/perfledger validate

bench: setup ## measure refresh and API speed against Datasette and DuckDB (prints a table, writes var/bench/)
	@command -v wrk >/dev/null || (apt-get update -qq && apt-get install -y -qq wrk) || \
	  (echo "make bench needs wrk (Debian package wrk)" >&2; exit 1)
	$(BIN)/python -m tools.bench

clean: ## remove the virtual environment and the data directory
	rm -rf $(VENV) var
