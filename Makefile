# Two commands for a newcomer: `make demo` and `make test`. Both create .venv when it is missing.
#
# Three environments, each built here from pyproject.toml alone:
#   .venv         the user environment: `pip install -e '.[all]'` with the newest versions the ranges allow
#                 (pandas 3, numpy 2, typer without click) plus the test runner, no pins (make test)
#   .venv-base    `pip install -e .` with no extra at all: bad input and the missing-extra errors
#   .venv-oracle  the peer libraries the oracle tests compare against, with the pins they need
#   .venv-docs    the documentation site's tooling (make docs; its tests run in make test-slow)
# Bytecode is compiled at install (this machine sets PYTHONDONTWRITEBYTECODE=1, so nothing would be
# cached later and every process would recompile pandas, scipy and matplotlib).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
BASE   := .venv-base
ORACLE := .venv-oracle
DOCS   := .venv-docs
UVX    = $(VENV)/bin/uv pip install --compile-bytecode -q --python
JOBS   ?= 2
PYTEST_FAST := not slow and not statistical and not browser and not oracle

.PHONY: demo test test-all test-slow test-base test-oracle test-fast typecheck bench chromium clean

$(VENV)/.base: pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(VENV)/bin/pip install -q --disable-pip-version-check uv
	@$(UVX) $(PY) -e .
	@$(PY) -m compileall -q src/voirdire >/dev/null
	@touch $@

$(VENV)/.test: $(VENV)/.base
	@$(UVX) $(PY) -e '.[all,test,typecheck]'
	@touch $@

$(BASE)/.ok: pyproject.toml $(VENV)/.base
	@test -x $(BASE)/bin/python || $(PYTHON) -m venv $(BASE)
	@$(UVX) $(BASE)/bin/python -e '.[test]'
	@touch $@

# irrcac pins scipy==1.12/numpy<2 and crowd-kit pulls in transformers, so both come in with --no-deps.
$(ORACLE)/.ok: pyproject.toml $(VENV)/.base
	@test -x $(ORACLE)/bin/python || $(PYTHON) -m venv $(ORACLE)
	@$(UVX) $(ORACLE)/bin/python -e '.[oracle]'
	@$(UVX) $(ORACLE)/bin/python --no-deps crowd-kit==1.4.2 irrcac==0.4.4
	@touch $@

# Headless Chromium for the HTML report's browser tests (Debian package), when missing.
chromium:
	@command -v chromium >/dev/null 2>&1 || ( (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) \
	  || echo "warning: could not install chromium; the browser tests will be skipped" )

demo: $(VENV)/.base
	@$(VENV)/bin/voirdire demo

# The README's test command: everything but the slow, statistical, browser and oracle groups, in the
# user environment, on $(JOBS) processes (< 5 min on two idle cores).
test: $(VENV)/.test
	@$(PY) -m pytest -q -n $(JOBS) -m "$(PYTEST_FAST)"

test-fast: test

# The slow, statistical and browser groups, in the user environment; .venv-docs first, so that the
# site's tests (tests/docs: a strict build with every tutorial executed, the references complete, the
# built site in headless Chromium) run instead of skipping.
test-slow: $(VENV)/.test $(DOCS)/.ok chromium
	@$(PY) -m pytest -q -n $(JOBS) --dist loadgroup -m "(slow or statistical or browser) and not oracle" -p no:randomly

# The bad-input, start-up, declared-import and missing-extra tests where no extra is installed
# (no pyarrow, dask, openpyxl, inspect_ai, scikit-learn; and no click, which nothing declares).
BASE_TESTS := tests/test_optional_extras.py tests/test_dependencies.py tests/cli/test_startup.py tests/cli/test_bad_input.py
test-base: $(BASE)/.ok
	@$(BASE)/bin/python -m pytest -q -n $(JOBS) -m "not slow and not statistical" $(BASE_TESTS)

# The comparisons against irrCAC, crowd-kit, krippendorff, ppi_py and statsmodels, and the fast
# tests again on pandas 2 and numpy 1 (the oldest majors the ranges allow).
test-oracle: $(ORACLE)/.ok
	@$(ORACLE)/bin/python -m pytest -q -n $(JOBS) -m "oracle or ($(PYTEST_FAST))" tests

# What CI runs (.ci/run): all of it, in the three environments (< 25 min on two idle cores).
test-all: test test-slow test-base test-oracle

typecheck: $(VENV)/.test
	@$(PY) -m mypy src/voirdire

bench: $(VENV)/.test
	@for s in bench/bench_*.py; do echo "== $$s"; $(PY) $$s || exit 1; done

# The documentation site (issue 32; mkdocs.yml, docs/): its own environment .venv-docs (voirdire with
# [all,docs]), so the user environment keeps no documentation tooling. `make docs` builds site/ offline
# with --strict (a warning fails it) and runs the tutorials' commands (cached in .docs-cache/ by input
# hash); `make docs-serve` serves it on http://localhost:8000.
MKDOCS = DISABLE_MKDOCS_2_WARNING=true NO_MKDOCS_2_WARNING=1 $(DOCS)/bin/mkdocs
.PHONY: docs docs-serve

$(DOCS)/.ok: pyproject.toml $(VENV)/.base
	@test -x $(DOCS)/bin/python || $(PYTHON) -m venv $(DOCS)
	@$(UVX) $(DOCS)/bin/python -e '.[all,docs]'
	@touch $@

docs: $(DOCS)/.ok
	@$(MKDOCS) build --strict

docs-serve: $(DOCS)/.ok
	@$(MKDOCS) serve --strict -a localhost:8000

clean:
	rm -rf $(VENV) $(BASE) $(ORACLE) .pytest_cache .hypothesis $(DOCS) site .docs-cache
