# Two commands for a newcomer: `make demo` and `make test`. Both create .venv when it is missing.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
UV     := $(VENV)/bin/uv pip install --python $(PY) -q

.PHONY: demo test test-fast typecheck bench chromium clean

$(VENV)/.base: pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(VENV)/bin/pip install -q --disable-pip-version-check uv
	@$(UV) -e .
	@touch $@

# Test-only oracles: irrcac pins scipy==1.12/numpy<2 and crowd-kit pulls in transformers, so both
# come in with --no-deps (their light dependencies are in the `test` extra).
$(VENV)/.test: $(VENV)/.base
	@$(UV) -e '.[test]'
	@$(UV) --no-deps crowd-kit==1.4.2 irrcac==0.4.4
	@touch $@

# Headless Chromium for the HTML report's browser tests (Debian package), when missing.
chromium:
	@command -v chromium >/dev/null 2>&1 || ( (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) \
	  || echo "warning: could not install chromium; the browser tests will be skipped" )

demo: $(VENV)/.base
	@$(VENV)/bin/voirdire demo

test: $(VENV)/.test chromium
	@$(PY) -m pytest -q

test-fast: $(VENV)/.test
	@$(PY) -m pytest -q -m "not statistical and not slow and not browser"

typecheck: $(VENV)/.test
	@$(PY) -m mypy src/voirdire

bench: $(VENV)/.test
	@for s in bench/bench_*.py; do echo "== $$s"; $(PY) $$s || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
