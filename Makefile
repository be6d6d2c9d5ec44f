# Research Desk — two commands: `make run` serves the dashboard, `make test` runs the tests.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export RESEARCH_DATA_DIR ?= $(CURDIR)/data
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export LITELLM_LOCAL_MODEL_COST_MAP := True
export TOKENIZERS_PARALLELISM := false

.PHONY: run test bench bench-quick install clean-data

$(STAMP): pyproject.toml
	@command -v $(PY) >/dev/null 2>&1 || { echo "need $(PY) on PATH (set PY=...)"; exit 1; }
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install torch==2.13.0
	$(BIN)/python -m pip install -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/streamlit run streamlit_app.py

# -rs: the summary lists every skipped test with its reason (e.g. shared data or chromium missing).
# TEST_WORKERS pytest-xdist processes (0 = one process); --dist loadfile keeps a module on one
# worker, so its module fixtures (a baseline run, a served dashboard) are built once.
TEST_WORKERS ?= 2
test: $(STAMP)
	@start=$$(date +%s); $(BIN)/python -m pytest tests -n $(TEST_WORKERS) --dist loadfile --durations=15 -rs; rc=$$?; \
	echo "test suite wall time: $$(( $$(date +%s) - start )) s"; exit $$rc

# Benchmarks: table + bench/results/*.json; TOPICS=<FreshWiki-layout folder> to override.
bench: $(STAMP)
	$(BIN)/python -m bench $(if $(TOPICS),--topics $(TOPICS))

bench-quick: $(STAMP)
	$(BIN)/python -m bench --quick $(if $(TOPICS),--topics $(TOPICS))

clean-data:
	rm -rf data
