# kgreview — two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.requirements-installed
PORT   ?= 8000
# Type-checked by `make lint` (and so by `make test`): the pure core and every module that
# writes (the services). Django models are typed by django-stubs.
MYPY_PATHS := construction/ kgreview/core/audit.py kgreview/core/retry.py kgreview/graph/services kgreview/graph/order.py kgreview/graph/bulk_admit.py kgreview/graph/sources.py \
	kgreview/review/decisions.py kgreview/review/mend.py kgreview/review/undo.py \
	kgreview/review/undo_set.py kgreview/review/bulk.py kgreview/review/bulk_accept.py \
	kgreview/review/bulk_check.py kgreview/review/services.py kgreview/review/kinds \
	kgreview/agents/runs.py kgreview/agents/items.py kgreview/agents/construct.py \
	kgreview/agents/schedules.py kgreview/agents/persist.py kgreview/agents/reaper.py \
	kgreview/questions/services.py kgreview/questions/runs.py kgreview/questions/gaps.py \
	kgreview/questions/judge.py \
	kgreview/agents/broker.py kgreview/api/services.py

.PHONY: setup run test lint format migrate corpus accounts serve clean evaluate bench

setup: $(STAMP)

$(STAMP): requirements.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $(STAMP)

migrate: setup
	$(BIN)/python manage.py migrate --noinput

corpus: migrate
	$(BIN)/python manage.py import_sources corpus

accounts: migrate
	$(BIN)/python manage.py demo_accounts

## The embedded default: SQLite, the filesystem broker, the sample curriculum, web + worker + beat.
run: migrate
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(BIN)/python manage.py import_sources corpus
	$(BIN)/python manage.py construct --all
	$(BIN)/python manage.py demo_accounts
	@echo "Open http://127.0.0.1:$(PORT)/ and log in as one of the accounts above."
	$(BIN)/python manage.py serve --port $(PORT)

## The whole suite: lint, then every test (PostgreSQL when DATABASE_URL points at it).
test: setup lint
	$(BIN)/python -m pytest

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy $(MYPY_PATHS)

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) var staticfiles test-results .pytest_cache .ruff_cache .mypy_cache

## Extractor quality on the gold sets, in a scratch database (the README's figures).
evaluate: setup
	rm -rf var/eval
	KG_VAR_DIR=var/eval $(BIN)/python manage.py migrate --noinput -v 0
	KG_VAR_DIR=var/eval $(BIN)/python manage.py import_sources corpus evaluation/heldout
	KG_VAR_DIR=var/eval $(BIN)/python manage.py construct --all --provider offline
	KG_VAR_DIR=var/eval $(BIN)/python manage.py evaluate --gold corpus/gold.jsonl
	KG_VAR_DIR=var/eval $(BIN)/python manage.py evaluate --gold evaluation/heldout/gold.jsonl

## The Debian manuals of evaluation/manuals (evaluation/README.md), each in a scratch SQLite
## database under var/eval-NAME: the documentation vocabulary, its pages, the offline reader,
## then the figures against its index and its hand labels. zsh is held out of all tuning.
.PHONY: evaluate-manuals
MANUALS ?= postgresql python zsh
EVAL_VOCABULARY ?= $(BIN)/python manage.py vocabulary --preset documentation
evaluate-manuals: setup
	@set -e; for m in $(MANUALS); do \
	  export DATABASE_URL= KG_VAR_DIR=$(CURDIR)/var/eval-$$m; rm -rf $$KG_VAR_DIR; \
	  $(BIN)/python manage.py migrate --noinput -v 0; \
	  $(EVAL_VOCABULARY) >/dev/null; \
	  $(BIN)/python manage.py import_sources evaluation/manuals/$$m/pages >/dev/null; \
	  $(BIN)/python manage.py construct --all --provider offline | tail -n 1; \
	  $(BIN)/python manage.py evaluate --manual evaluation/manuals/$$m; echo; \
	done

## Benchmarks; set DATABASE_URL to PostgreSQL for the published figures, SCALE=5 or 10 for
## five or ten times the base graph (the documents and render benches have one size).
SCALE ?= 1
bench: setup
	$(BIN)/python manage.py bench resolve search construct review bulk queue heal graph ask competency --scale $(SCALE)
	$(BIN)/python manage.py bench documents render
