# citeaudit — the two commands a new user needs are `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# pywb pins libraries citeaudit cannot share: its own virtualenv, used as programs (archive tests,
# citeaudit replay); a failed build only warns, and the tests that need it skip saying why
PYWB_VENV  := .venv-pywb
PYWB_STAMP := $(PYWB_VENV)/.installed
PYWB_SPEC  := pywb>=2.10.0,<2.11
export DAGSTER_HOME ?= $(CURDIR)/.dagster_home

.PHONY: demo test lint bench ui clean venv pywb

venv: $(STAMP)

# uv (from PyPI, into each virtualenv) installs the same versions as pip in about a third of the
# time: it downloads and unpacks in parallel. It reads no pip configuration: where it cannot
# install (an index only pip is configured for), pip does, as before.
# $(call install,VENV,ARGS): uv, else pip, installs ARGS
install = { $(1)/bin/python -m pip install --quiet uv && \
	$(1)/bin/uv pip install --python $(1)/bin/python --quiet $(2); } || { \
	echo "uv could not install into $(1): pip installs instead (slower)" >&2; \
	$(1)/bin/python -m pip install --quiet $(2); }

# Bytecode: the modules the project, its servers and its tests import are compiled once at
# install, by importing them in two processes side by side (about 4,600 modules, 12 s).
# uv's --compile-bytecode compiled all 21,500 files of the virtualenv instead (28 s of a 37 s
# install; most of them, such as the SDKs' type modules, are never imported). A module missed
# here is compiled by the first process that imports it (pytest then also reports the
# DeprecationWarnings of a library's source, e.g. surt's escapes). pywb's virtualenv likewise.
WARM_IMPORTS_1 := pipelines.definitions pipelines.celery_app citeaudit.cli dagster_webserver.cli \
	dagster._daemon dagster_celery dagster_postgres celery.bin.celery
WARM_IMPORTS_2 := moto.server moto.s3 playwright.sync_api s3fs openai anthropic scipy.stats \
	statsmodels.api krippendorff surt tldextract fastwarc warcio rich.progress pytest xdist execnet \
	hypothesis.strategies _hypothesis_pytestplugin
PYWB_WARM_IMPORTS := pywb.apps.cli pywb.manager.manager
# $(call warm,PYTHON,MODULES): import MODULES with bytecode writing on (a failed import warns)
warm = env -u PYTHONDONTWRITEBYTECODE $(1) -c 'exec("import importlib, sys\nfor m in sys.argv[1:]:\n try: importlib.import_module(m)\n except Exception as e: print(\"warning:\", m, \"does not import:\", e, file=sys.stderr)")' $(2)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	@$(call install,$(VENV),--upgrade pip -e '.[test]')
	@$(call warm,$(PY),$(WARM_IMPORTS_1)) & $(call warm,$(PY),$(WARM_IMPORTS_2)); wait
	@touch $(STAMP)

pywb: $(PYWB_STAMP)

$(PYWB_STAMP):
	@if $(PYTHON) -m venv $(PYWB_VENV) && $(call install,$(PYWB_VENV),'$(PYWB_SPEC)'); \
	then $(call warm,$(PYWB_VENV)/bin/python,$(PYWB_WARM_IMPORTS)); touch $(PYWB_STAMP); \
	else echo "warning: could not build $(PYWB_VENV) (pywb); its tests will skip" >&2; fi

## demo: generate the demo corpus into data/raw, archive its last date live from a loopback
##       site (127.0.0.1 only), run the whole pipeline with the llm grader asking a judge
##       STAND-IN (a loopback server that is no model: it agrees with the planted truth on 85%
##       of pairs), draw a review sample of the last date, have the demo's annotators label it,
##       rerun that date (the support rate from the sample: human-only and PPI side by side),
##       print a summary and what changed on the last date (the planted regression's alert)
DEMO_SAMPLE_N ?= 240
demo: $(STAMP)
	$(VENV)/bin/citeaudit demo-corpus --out data/raw
	$(VENV)/bin/citeaudit demo-archive --raw data/raw
	@# the judge stand-in runs for the two runs below (the second asks nothing: its replies are
	@# cached under data/raw/judge_cache) and is stopped by its PID whatever happens
	@url=$$(mktemp); rm -f $$url; \
	$(PY) -m citeaudit.demo_corpus.judge_standin --raw data/raw --url-file $$url & pid=$$!; \
	for i in $$(seq 100); do [ -s $$url ] || sleep 0.1; done; \
	if [ ! -s "$$url" ]; then kill $$pid; echo "error: the judge stand-in did not start" >&2; \
	  exit 1; fi; \
	export CITEAUDIT_JUDGE_BASE_URL=$$(cat $$url) CITEAUDIT_JUDGE_MODEL=citeaudit-judge-stand-in \
	  CITEAUDIT_JUDGE_RATE=1000 CITEAUDIT_JUDGE_CONCURRENCY=8; rm -f $$url; \
	last=$$(ls data/raw/answers | tail -n 1); \
	echo "citeaudit run (every date; the llm grader asks the judge stand-in at $$CITEAUDIT_JUDGE_BASE_URL)"; \
	$(VENV)/bin/citeaudit run --raw data/raw --derived data/derived --quiet && \
	$(VENV)/bin/citeaudit sample --raw data/raw --derived data/derived --date $$last \
	  --n $(DEMO_SAMPLE_N) --by engine --grader llm --replace && \
	$(VENV)/bin/citeaudit demo-label --raw data/raw --date $$last && \
	$(VENV)/bin/citeaudit run --raw data/raw --derived data/derived --date $$last --codebook v1; \
	status=$$?; kill $$pid; exit $$status
	@# what changed on the last date, and the alerts it fires (exit 3: an alert, as planted)
	$(VENV)/bin/citeaudit compare --raw data/raw --derived data/derived \
	    --date $$(ls data/raw/answers | tail -n 1) || [ $$? -eq 3 ]
	@printf '%s\n' "Real answers from an engine (docs/imports.md): citeaudit collect --engine openai|gemini|anthropic|perplexity --queries PANEL.jsonl --out RAW" "  or from saved API responses: citeaudit import openai|gemini|anthropic|perplexity RESPONSE.json... --out RAW, then citeaudit run --raw RAW"

# The tests' temporary folders (Dagster's SQLite instances, outputs, WARCs; about 300 MB) go to a
# RAM disk when the machine has one: SQLite commits and closes with an fsync per Dagster event,
# which on a busy disk cost about a third of a test run's time (less on an idle one).
# TEST_TMPDIR=/tmp keeps them on disk.
TEST_TMPDIR ?= $(shell [ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm)

# Bytecode is cached even where the environment says not to (PYTHONDONTWRITEBYTECODE): the
# suite starts about a hundred Python processes (CLI runs, Celery workers, Dagster's UI), each of
# which would compile the project's modules again, and pytest would rewrite every test module's
# assertions in each worker. (__pycache__ folders are ignored by git.) The project's modules are
# compiled once before the workers start (on a fresh clone each worker compiled them itself, at
# the same moment: 1.7 s a worker).
# Three workers on two cores: about a third of the suite's time is waiting (servers, politeness
# delays, subprocesses), which a third worker fills: 0.90x the wall of two, the same CPU (two
# interleaved pairs of whole runs, 2026-12-03); a fourth gave nothing (1.04x the wall of three,
# two pairs).
# The two virtualenvs build side by side (independent): 34.6 s on a fresh clone, 55.9 s when uv
# compiled every file of both (one build each, 2026-12-03).
## test: the whole test suite (unit, golden pywb, bad files, assets, end-to-end dagster runs)
test:
	@$(MAKE) --no-print-directory -j2 $(STAMP) $(PYWB_STAMP)
	$(VENV)/bin/ruff check .
	$(PY) -m compileall -q -j0 citeaudit assets pipelines
	$(if $(TEST_TMPDIR),TMPDIR=$(TEST_TMPDIR)) env -u PYTHONDONTWRITEBYTECODE \
	    $(PY) -m pytest -q -n 3 --dist loadscope --no-loadscope-reorder

lint: $(STAMP)
	$(VENV)/bin/ruff check .

## bench: every benchmark, once (not part of make test; hours); results in benchmarks/README.md
bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,bench]'
	$(PY) benchmarks/bench_index.py
	$(PY) benchmarks/bench_metrics.py
	$(PY) benchmarks/bench_backfill.py
	$(PY) benchmarks/bench_support.py
	$(PY) benchmarks/bench_alignment.py
	$(PY) benchmarks/bench_scholarly.py --citations 20000
	test -f benchmarks/.cache/day-20000-s7/raw/ground_truth.json || $(VENV)/bin/citeaudit \
	  demo-corpus --out benchmarks/.cache/day-20000-s7/raw --answers 20000 --days 1 --seed 7 --force
	$(PY) benchmarks/bench_scholarly.py --raw benchmarks/.cache/day-20000-s7/raw
	$(PY) benchmarks/bench_nights.py
	$(PY) benchmarks/bench_source_risk.py
	$(PY) benchmarks/bench_nightly.py
	$(PY) benchmarks/bench_evidence.py
	$(PY) benchmarks/bench_fetch.py
	$(PY) benchmarks/bench_distributed.py

## ui: the Dagster UI on the same instance (http://127.0.0.1:3000)
ui: $(STAMP)
	$(VENV)/bin/citeaudit ui --raw data/raw --derived data/derived

clean:
	rm -rf data/derived/* .dagster_home/storage .dagster_home/history .dagster_home/schedules
