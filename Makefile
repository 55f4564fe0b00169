# Two commands: `make demo` and `make test`. Each creates .venv when missing and installs the
# project with its test extras first, so a fresh machine needs nothing installed by hand.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/tabsdc demo --out demo-report.html

test: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check tabsdc microsdc sdcreport tests benchmarks examples

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache demo-report.html
