"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
import shutil

import pytest
from django.db import connection

from tests import factories

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def require(condition: bool, reason: str) -> None:
    """Skip when a service is missing on a laptop; fail in CI, where it must be there."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


def pytest_collection_modifyitems(config, items):
    """A test that runs graphs of its own on SQLite (``own_database``) gives the same
    outcome whichever database the suite runs on: CI's PostgreSQL phase leaves it to the
    SQLite phase (a developer's run with DATABASE_URL alone still runs it)."""
    if os.environ.get("KG_TEST_DATABASE") != "postgresql":
        return
    once = pytest.mark.skip(
        reason="runs its own SQLite graphs, never the suite's database: the SQLite phase runs it"
    )
    for item in items:
        if item.get_closest_marker("own_database"):
            item.add_marker(once)


@pytest.fixture(scope="session", autouse=True)
def _database_is_the_one_asked_for(django_db_setup, django_db_blocker):
    """CI names the database it means to test; running on another one is a failure."""
    wanted = os.environ.get("KG_TEST_DATABASE", "")
    if wanted and connection.vendor != wanted:
        pytest.exit(f"KG_TEST_DATABASE={wanted} but the suite runs on {connection.vendor}", 2)


@pytest.fixture(autouse=True)
def _the_project_celery_app_stays_current():
    """A test that leaves another Celery app current (``Celery()`` makes itself current in
    its thread) moves every later patch of a task onto that app, while the live server's
    thread still sends through the project's; the next test would run a task it meant to
    hold. Said at the test that did it, and put right for the rest."""
    from celery import current_app

    from kgreview.celery import app

    yield
    if current_app._get_current_object() is not app:
        app.set_current()
        pytest.fail("this test left another Celery app current: make it with set_as_current=False")


@pytest.fixture
def on_postgres(db):
    """Row locks, partial indexes and triggers behave differently on SQLite."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: run with DATABASE_URL=postgres://...")


@pytest.fixture
def chromium_path() -> str:
    path = shutil.which("chromium") or "/usr/bin/chromium"
    require(os.path.exists(path), "Chromium is not installed (apt-get install -y chromium)")
    return path


@pytest.fixture
def reference_data(transactional_db):
    """Re-create what data migrations seed (groups, vocabulary) after a flush.

    Transactional tests flush every table, migration data included. Django's
    serialized_rollback cannot help under Playwright: its event loop gives the test a
    different connection object than the one that holds the serialized copy.
    """
    from importlib import import_module

    from django.apps import apps

    import_module("kgreview.graph.migrations.0003_seed_relation_types").seed(apps, None)
    import_module("kgreview.review.migrations.0002_groups").forwards(apps, None)
    import_module("kgreview.agents.migrations.0004_default_schedules").create(apps, None)


@pytest.fixture(autouse=True)
def _fresh_name_caches():
    """Process-wide name caches follow row ids, and a rolled-back test hands the same ids
    to the next one: start every test with empty caches."""
    from kgreview.agents.adapters import INDEX_CACHE
    from kgreview.explorer import suggestions
    from kgreview.graph.name_index import QUESTION_INDEX
    from kgreview.graph.search import NAME_CACHE

    INDEX_CACHE.clear()
    NAME_CACHE.clear()
    QUESTION_INDEX.clear()
    suggestions.forget()
    yield


@pytest.fixture
def f():
    """The factories module, as a fixture so tests read ``f.concept("RAG")``."""
    return factories


@pytest.fixture
def curator_user(f):
    """A user in the curators' group (a module may define its own ``curator``)."""
    return f.user("cura", role="curator")


@pytest.fixture
def curator(curator_user):
    """A client signed in as ``curator_user``."""
    from django.test import Client

    client = Client()
    client.force_login(curator_user)
    return client
