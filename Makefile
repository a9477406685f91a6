# kgreview — two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.requirements-installed
PORT   ?= 8000
# Type-checked by `make lint` (and so by `make test`): the pure core and every module that
# writes (the services). Django models are typed by django-stubs.
MYPY_PATHS := construction/ kgreview/core/audit.py kgreview/core/retry.py kgreview/graph/services kgreview/graph/order.py kgreview/graph/precheck.py kgreview/graph/bulk_admit.py kgreview/graph/sources.py \
	kgreview/graph/rules.py kgreview/graph/bulk.py \
	kgreview/review/decide/decisions.py kgreview/review/decide/mend.py kgreview/review/decide/undo.py \
	kgreview/review/decide/undo_set.py kgreview/review/decide/bulk.py kgreview/review/decide/bulk_accept.py \
	kgreview/review/decide/bulk_check.py kgreview/review/services.py kgreview/review/kinds \
	kgreview/agents/runs.py kgreview/agents/items.py kgreview/agents/construct.py \
	kgreview/agents/schedules.py kgreview/agents/persist.py kgreview/agents/reaper.py \
	kgreview/questions/services.py kgreview/questions/runs.py kgreview/questions/gaps.py \
	kgreview/questions/judge.py \
	kgreview/agents/broker.py kgreview/api/services.py \
	kgreview/graph/attribute_rules.py \
	kgreview/agents/ontology_import.py kgreview/agents/ontology_specs.py kgreview/agents/bootstrap.py kgreview/exports/rdf.py kgreview/exports/shapes.py

.PHONY: setup run graph test lint format migrate corpus accounts serve clean evaluate bench

setup: $(STAMP)

$(STAMP): requirements.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $(STAMP)

# The demo lives in its own folder (database, broker, secret key), apart from every
# team's graph (var/graphs/NAME/); `manage.py graph` refuses to mix them.
DEMO := KG_VAR_DIR=$(CURDIR)/var/demo $(BIN)/python

migrate: setup
	$(DEMO) manage.py migrate --noinput

corpus: migrate
	$(DEMO) manage.py import_sources corpus

accounts: migrate
	$(DEMO) manage.py demo_accounts

## The embedded default: SQLite, the filesystem broker, the sample curriculum, web + worker + beat.
run: setup
	$(DEMO) manage.py graph --demo --port $(PORT)

## A team's own graph, empty, beside the demo: make graph NAME=acme [DOCS=path ...]
## [VOCABULARY=documentation|curriculum|file.yaml] [CURATOR=you] [PORT=8001] [SERVE=no].
## Again on the same NAME: the same graph (new or changed documents only).
graph: setup
	@echo "$(NAME)" | grep -Eq '^[a-z0-9][a-z0-9_-]{0,62}$$' || { echo "make graph needs NAME=..., lowercase letters, digits, - and _ (e.g. make graph NAME=acme DOCS=~/manuals)"; exit 2; }
	KG_VAR_DIR=$(CURDIR)/var/graphs/$(NAME) $(BIN)/python manage.py graph $(NAME) --port $(PORT) \
		$(if $(DOCS),--docs $(DOCS)) $(if $(VOCABULARY),--vocabulary $(VOCABULARY)) \
		$(if $(CURATOR),--curator $(CURATOR)) $(if $(filter no,$(SERVE)),--no-serve)

# The vocabulary files' reader and installer are typed like the services.
MYPY_PATHS += kgreview/graph/vocabulary_files.py kgreview/review/vocabulary.py kgreview/agents/own_graph.py
# The concept vocabulary's models and reads (its services are under graph/services).
MYPY_PATHS += kgreview/graph/concept_types.py kgreview/graph/type_selectors.py kgreview/graph/history.py
MYPY_PATHS += kgreview/graph/pattern_book.py kgreview/review/decide/widen.py kgreview/review/pattern_holds.py
MYPY_PATHS += kgreview/agents/concept_typing.py kgreview/agents/annotations.py
MYPY_PATHS += kgreview/review/team/votes.py kgreview/review/team/doubling.py kgreview/review/team/leases.py kgreview/core/backends.py
# Agreement between reviewers: the statistics and their reading of the votes.
MYPY_PATHS += kgreview/core/agreement.py kgreview/review/agreement.py
# The writing API (issue 29): one door for proposals from other tools.
MYPY_PATHS += kgreview/agents/submissions.py kgreview/agents/submission_items.py kgreview/api/proposing.py

# Releases: the cut, its notes, its files and names (docs/releases.md).
MYPY_PATHS += kgreview/exports/releases kgreview/core/api_parts.py

## The whole suite: lint, then every test (PostgreSQL when DATABASE_URL points at it); the
## 25 slowest steps are listed at the end, to keep the suite's wall time in view.
test: setup lint
	$(BIN)/python -m pytest --durations=25

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy $(MYPY_PATHS)

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# Teams' graphs (var/graphs/) are their work, never cleaned away.
clean:
	rm -rf $(VENV) staticfiles test-results .pytest_cache .ruff_cache .mypy_cache
	@test ! -d var || find var -mindepth 1 -maxdepth 1 ! -name graphs -exec rm -rf {} +

## Extractor quality on the gold sets, in a scratch database (the README's figures).
evaluate: setup
	rm -rf $(CURDIR)/var/eval
	KG_VAR_DIR=$(CURDIR)/var/eval $(BIN)/python manage.py migrate --noinput -v 0
	KG_VAR_DIR=$(CURDIR)/var/eval $(BIN)/python manage.py import_sources corpus evaluation/heldout
	KG_VAR_DIR=$(CURDIR)/var/eval $(BIN)/python manage.py construct --all --provider offline
	KG_VAR_DIR=$(CURDIR)/var/eval $(BIN)/python manage.py evaluate --gold corpus/gold.jsonl
	KG_VAR_DIR=$(CURDIR)/var/eval $(BIN)/python manage.py evaluate --gold evaluation/heldout/gold.jsonl

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
	$(BIN)/python manage.py bench keys --scale $(SCALE)  # Chromium: the review loop, keypress to painted
	$(BIN)/python manage.py bench keys-sample
	env -u DATABASE_URL $(BIN)/python manage.py bench lockout
