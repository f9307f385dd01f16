# arbwb: the two commands a new user types are `make report` and `make test`.
# Both create .venv when needed and install pinned versions from constraints.txt.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip
# CPU-only torch first: without the pin pip pulls a multi-GB CUDA build.
TORCH  := torch==2.13.0

.PHONY: report test test-nonative lint typecheck demo bench clean-venv

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.core-installed: pyproject.toml constraints.txt setup.py arbwb/native/_termcount.c arbwb/native/_jsonlines.c | $(BIN)/python
	$(PIP) install --quiet -c constraints.txt -e .
	touch $@

$(VENV)/.dev-installed: pyproject.toml constraints.txt setup.py arbwb/native/_termcount.c arbwb/native/_jsonlines.c | $(BIN)/python
	$(PIP) install --quiet $(TORCH)
	$(PIP) install --quiet -c constraints.txt -e '.[dev,dense,contextbench,ray]'
	touch $(VENV)/.core-installed $@

## report: run every analysis on the embedded demo release; figures land in figures/
report: $(VENV)/.core-installed
	$(BIN)/arbwb report --data data/demo --out reports/demo
	mkdir -p figures
	cp reports/demo/figures/* figures/

## test: the whole suite (unit, parity on ../shared when present, notebooks), the C modules'
## users again on their pure-Python fallbacks, plus lint and types
test: $(VENV)/.dev-installed
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest tests
	$(MAKE) test-nonative
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest --nbval-lax notebooks
	$(BIN)/ruff check arbwb tests benchmarks
	$(BIN)/ruff format --check arbwb tests benchmarks
	$(BIN)/mypy arbwb

## test-nonative: the tests of the C modules and their users with ARBWB_NO_NATIVE=1, i.e. on
## the pure-Python fallbacks a compiler-less install uses
NONATIVE_TESTS := termcount jsonlines native_select termcache grep_lines retrievers_parity \
	retrievers_grep retrievers_core retrievers_repomap repomap_index_fast
test-nonative: $(VENV)/.dev-installed
	ARBWB_NO_NATIVE=1 HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q \
		$(patsubst %,tests/test_%.py,$(NONATIVE_TESTS))

lint: $(VENV)/.dev-installed
	$(BIN)/ruff check arbwb tests benchmarks
	$(BIN)/ruff format --check arbwb tests benchmarks

typecheck: $(VENV)/.dev-installed
	$(BIN)/mypy arbwb

## demo: rebuild data/demo deterministically from data/demo-src
demo: $(VENV)/.dev-installed
	$(BIN)/arbwb demo build --out data/demo

## bench: speed and memory benchmarks (print ratios against in-run baselines)
bench: $(VENV)/.dev-installed
	$(BIN)/python benchmarks/bench_bcy.py
	$(BIN)/python benchmarks/bench_builder.py
	$(BIN)/python benchmarks/bench_retrievers.py
	$(BIN)/python benchmarks/bench_report.py
	$(BIN)/python benchmarks/bench_startup.py
	$(BIN)/python benchmarks/bench_grep.py
	$(BIN)/python benchmarks/bench_fallback.py
	$(BIN)/python benchmarks/bench_granularity.py
	$(BIN)/python benchmarks/bench_cli_speed.py
	HF_HUB_OFFLINE=1 $(BIN)/python benchmarks/bench_dense.py

clean-venv:
	rm -rf $(VENV)
