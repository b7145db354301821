# toolsight: `make run` runs the built-in starter suite, `make test` runs lint, types and tests.
# Both create .venv on a fresh machine and install the project (and the system packages the
# browser tests need) before they do anything else.
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
PYTHON ?= python3
# the test suite runs on this many worker processes (pytest-xdist; CI has 2 cores)
PYTEST_WORKERS ?= 2

.PHONY: run test lint typecheck pytest system-deps bench clean mutation

# The perception extra brings RapidOCR 3.x (`rapidocr`, headless OpenCV, PP-OCRv6 models in the wheel).
# RapidOCR 1.4.4 (PP-OCRv4 models in the wheel; toolsight prefers it: it reads small digits better)
# requires the non-headless opencv-python, which would overwrite the headless cv2: it is added without
# deps (its real deps are the perception extra).
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -U pip
	$(PY) -m pip install -q --disable-pip-version-check -e '.[dev,sandbox-libs]'
	$(PY) -m pip install -q --disable-pip-version-check --no-deps 'rapidocr-onnxruntime==1.4.4'
	@touch $(STAMP)

# Debian's chromium drives the HTML viewer tests; installed only when missing and we are root.
system-deps:
	@if ! command -v chromium >/dev/null 2>&1 && [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian chromium for the browser tests"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
		|| echo "warning: could not install chromium; browser tests will be skipped"; \
	fi
	@if ! command -v tesseract >/dev/null 2>&1 && [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian tesseract-ocr (second OCR engine)"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tesseract-ocr >/dev/null) \
		|| echo "warning: could not install tesseract-ocr; the tesseract OCR test will be skipped"; \
	fi

run: $(STAMP)
	$(VENV)/bin/toolsight run starter --model reference

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests $(wildcard bench) examples
	$(VENV)/bin/lint-imports

# src strictly; then the tests, one folder per run (its own files, not its subfolders) (see [tool.mypy] in pyproject.toml for why and
# for the test-appropriate strictness these flags give)
MYPY_TEST_FLAGS := --implicit-reexport --no-warn-return-any --no-warn-unused-ignores
typecheck: $(STAMP)
	$(VENV)/bin/mypy
	$(VENV)/bin/mypy $(MYPY_TEST_FLAGS) $(wildcard tests/*.py)
	@set -e; for d in $$(find tests -mindepth 2 -name '*.py' -printf '%h\n' | sort -u); do \
		echo "mypy $$d"; $(VENV)/bin/mypy $(MYPY_TEST_FLAGS) $$d/*.py; \
	done
	cd examples/plugin-benchmark && MYPYPATH=$(CURDIR)/src $(abspath $(VENV))/bin/mypy  # its own [tool.mypy]

pytest: $(STAMP) system-deps
	@$(VENV)/bin/pytest -n $(PYTEST_WORKERS); rc=$$?; if [ $$rc -eq 5 ]; then echo 'no tests collected'; exit 0; fi; exit $$rc
	@# as root, the sandbox attack tests run a second time as an unprivileged uid this run makes up (it
	@# needs no account; tests/sandbox/unprivileged.py), so both privilege levels are tested
	@if [ "$$(id -u)" = "0" ]; then $(PY) tests/sandbox/unprivileged.py -n $(PYTEST_WORKERS); fi

test: lint typecheck pytest

bench: $(STAMP)
	$(PY) bench/engine.py
	$(PY) bench/sandbox.py
	$(PY) bench/opencv_tools.py
	$(PY) bench/perception.py
	$(PY) bench/web.py
	$(PY) bench/vtc_code.py
	$(PY) bench/scale.py

# Mutation testing (docs/testing.md): mutmut over the files in [tool.mutmut] of pyproject.toml.
# MUTATE picks the mutants to run (module globs; e.g. MUTATE="toolsight.engine.store*"); a file must be
# listed in only_mutate to have mutants. Results stay in mutants/ (re-runs skip what is known).
MUTATE ?= toolsight.scoring* toolsight.benchmarks.*.scorer* toolsight.metrics.chain* toolsight.engine.store*
SHARED ?= $(abspath ..)/shared
mutation: $(STAMP)
	TOOLSIGHT_SHARED=$(SHARED) $(VENV)/bin/mutmut run $(MUTATE)
	$(VENV)/bin/mutmut export-cicd-stats
	@cat mutants/mutmut-cicd-stats.json; echo

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache mutants
