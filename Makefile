# trainwire entry points. `make demo` is the main job (it installs what the demo needs); `make test`
# installs everything else and runs every test.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
NODE_MODULES := typescript/node_modules/.package-lock.json
TS_BUILD := typescript/dist/index.js
SETUP := system $(VENV)/.setup-done $(NODE_MODULES) $(TS_BUILD)
# the extras `trainwire demo run` imports (a tiny GPT-2 trained by the transformers Trainer)
DEMO_EXTRAS := transformers
# every extra: the tests cover each integration, export and view
TEST_EXTRAS := dev,fast,transformers,serve,conformance,plot,notebook,lightning,mlflow,tensorboard,wandb,optuna,ray,keras,trl
PIP_INSTALL := $(PY) -m pip install --quiet --disable-pip-version-check -c python/constraints.txt -e

.PHONY: setup system generate check format test demo bench fuzz clean

setup: $(SETUP)

system:
	@tools/setup-system.sh

# Re-installs only when the pins change; an unchanged tree makes `make setup` a no-op.
# `.setup-demo`: the demo's extras alone; `.setup-done`: every extra, the demo's included.
$(VENV)/.setup-demo: python/pyproject.toml python/constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) 'python[$(DEMO_EXTRAS)]'
	touch $@

$(VENV)/.setup-done: python/pyproject.toml python/constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) 'python[$(TEST_EXTRAS)]'
	touch $@ $(VENV)/.setup-demo

$(NODE_MODULES): typescript/package.json typescript/package-lock.json
	cd typescript && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The harness of `trainwire conformance run --all`, the package tests and the dashboard (built into
# the Python package) need the build: rebuilt when a source changes.
$(TS_BUILD): $(NODE_MODULES) $(shell find typescript/src typescript/dashboard -type f 2>/dev/null) typescript/tsconfig.json typescript/tsconfig.base.json
	cd typescript && npm run --silent build

generate: setup
	$(PY) tools/generate.py

check: setup
	$(PY) tools/check.py

# the house style, applied: ruff for the Python, Biome for the TypeScript (`make check` holds to it)
format: setup
	$(VENV)/bin/ruff format . && $(VENV)/bin/ruff check --fix .
	cd typescript && npx biome check --write .

test: setup check
	cd typescript && npm run --silent build && npm test --silent
	$(PY) -m pytest

# the demo's extras only: no Node.js, no browser, none of the other frameworks
demo: $(VENV)/.setup-demo
	$(PY) -m trainwire demo run

bench: setup
	cd typescript && npm run --silent build
	$(PY) tools/bench/run.py

fuzz: setup
	TRAINWIRE_FUZZ_PROFILE=long $(PY) -m pytest conformance/tests -k fuzz

clean:
	rm -rf $(VENV) typescript/node_modules typescript/dist
