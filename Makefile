# Two commands: `make demo` and `make test`. Each creates .venv when missing and installs the
# project with its test extras first, so a fresh machine needs nothing installed by hand.
# `make test` is the fast suite (tests marked slow left out); `make test-slow` runs the slow
# ones and every property test again with more examples; `make test-all` both (CI). The fast
# suite and the property tests run on every core (pytest-xdist); the slow tests, some of which
# race a time limit, one at a time.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-slow test-all lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/tabsdc demo --out demo-report.html

test: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python -m pytest -q -m "not slow" -n auto

test-slow: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python -m pytest -q -m slow
	MPLBACKEND=Agg HYPOTHESIS_PROFILE=ci $(BIN)/python -m pytest -q -m "hypothesis and not slow" -n auto

test-all: test test-slow

lint: $(STAMP)
	$(BIN)/ruff check tabsdc microsdc sdcreport tests benchmarks examples

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache demo-report.html
