# Every target CI uses is here; .ci/run calls `make ci`.
PYTHON ?= python3
PIP ?= $(PYTHON) -m pip
# llama-cpp-python compiles from source (7-10 min on 2 cores, once; pip caches the wheel)
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF

.PHONY: install browser setup demo test lint ci bench

install:
	$(PIP) install -q -e '.[all]'

browser:  # Debian's Chromium for Playwright (Playwright cannot download its own here)
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq chromium)

setup: install browser

demo: install
	webagent demo

test: setup
	$(PYTHON) -m pytest -q

lint:
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .
	$(PYTHON) -m mypy

ci: setup lint
	$(PYTHON) -m pytest -q
	$(PYTHON) bench/figures/method_quality.py --check
	$(PYTHON) bench/figures/live_quality.py --check

bench: install  # every figure of the README and docs, then the docs from them (hours)
	$(PYTHON) bench/run.py
