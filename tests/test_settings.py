"""Settings come from the environment, with defaults that work and errors that explain."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


SHOWN = (
    "s.DATABASES['default']['ENGINE'], s.CELERY_BROKER_URL, s.KG_CONFIDENCE_GATE, "
    "s.KG_MAX_EDGES_PER_CHUNK, s.KG_LLM_PROVIDER"
)


def load_settings(tmp_path, *, shown: str = SHOWN, **env) -> subprocess.CompletedProcess:
    """The settings loaded in a fresh process with only ``env`` set; it prints ``shown``
    (an expression over the settings ``s``)."""
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("KG_", "DATABASE_URL", "CELERY_"))
    }
    clean.update(
        {"DJANGO_SETTINGS_MODULE": "kgreview.settings", "KG_VAR_DIR": str(tmp_path), **env}
    )
    code = f"import django; django.setup(); from django.conf import settings as s; print({shown})"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True
    )


def test_defaults_need_no_environment(tmp_path):
    """With nothing set: SQLite, the filesystem broker, the offline extractor, gate 0.6."""
    out = load_settings(tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [
        "django.db.backends.sqlite3",
        "filesystem://",
        "0.6",
        "8",
        "offline",
    ]
    assert (tmp_path / "broker" / "queue").is_dir()
    assert (tmp_path / "broker" / "control").is_dir()
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


def test_postgres_url_selects_psycopg(tmp_path):
    """A postgres:// DATABASE_URL selects the PostgreSQL backend."""
    out = load_settings(
        tmp_path,
        DATABASE_URL="postgres://u@db.example:5432/kg",
        CELERY_BROKER_URL="redis://r:6379/0",
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[:2] == ["django.db.backends.postgresql", "redis://r:6379/0"]


@pytest.mark.parametrize(
    "env,words",
    [
        ({"KG_CONFIDENCE_GATE": "1.5"}, "must lie between 0.0 and 1.0"),
        ({"KG_CONFIDENCE_GATE": "high"}, "is not a number"),
        ({"KG_MAX_EDGES_PER_CHUNK": "0"}, "must be at least 1"),
        ({"KG_LLM_PROVIDER": "magic"}, "use offline, rules or openai"),
        ({"DATABASE_URL": "mysql://u@h/db"}, "must point at SQLite or PostgreSQL"),
        ({"DJANGO_DEBUG": "maybe"}, "is not a boolean"),
    ],
)
def test_bad_values_fail_at_start_with_the_variable_named(tmp_path, env, words):
    """A misconfigured variable stops start-up with a sentence naming it."""
    out = load_settings(tmp_path, **env)
    assert out.returncode != 0
    assert words in out.stderr
    assert next(iter(env)) in out.stderr


def test_the_embedded_broker_keeps_its_exchange_tables_in_the_data_folder(tmp_path):
    """kombu's filesystem transport would write ./control wherever the process started;
    it is pointed into var/broker, so no broker state lands in the working tree."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("KG_", "CELERY_"))}
    clean.update({"DJANGO_SETTINGS_MODULE": "kgreview.settings", "KG_VAR_DIR": str(tmp_path)})
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.CELERY_BROKER_TRANSPORT_OPTIONS['control_folder'])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(tmp_path / "broker" / "control")


@pytest.mark.parametrize(
    "env,words",
    [
        ({"KG_ITEM_STALE_SECONDS": "20"}, "must be at least twice KG_ITEM_HEARTBEAT_SECONDS=15"),
        ({"KG_ITEM_HEARTBEAT_SECONDS": "0"}, "must be at least 1"),
        ({"KG_REAPER_SECONDS": "0"}, "must be at least 1"),
        ({"KG_ITEM_REQUEUE_SECONDS": "soon"}, "is not a whole number"),
    ],
)
def test_bad_reaper_windows_fail_at_start_with_the_variable_named(tmp_path, env, words):
    out = load_settings(tmp_path, **env)
    assert out.returncode != 0
    assert words in out.stderr and next(iter(env)) in out.stderr


def test_the_embedded_broker_is_the_hardened_transport_and_beat_runs_the_reaper(tmp_path):
    """Defaults: quarantine beside the queue, agents.reap every minute, heartbeats every
    15 s, a claim stale after 2 minutes, a silent run's sources queued again after 12."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("KG_", "CELERY_"))}
    clean.update({"DJANGO_SETTINGS_MODULE": "kgreview.settings", "KG_VAR_DIR": str(tmp_path)})
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.CELERY_BROKER_TRANSPORT, s.CELERY_BROKER_TRANSPORT_OPTIONS['quarantine_folder'],"
        " s.CELERY_BEAT_SCHEDULE['agents-reap'], s.KG_ITEM_HEARTBEAT_SECONDS,"
        " s.KG_ITEM_STALE_SECONDS, s.KG_ITEM_REQUEUE_SECONDS)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == (
        f"kgreview.agents.broker:Transport {tmp_path / 'broker' / 'quarantine'} "
        "{'task': 'agents.reap', 'schedule': 60.0} 15 120 720"
    )
    assert (tmp_path / "broker" / "quarantine").is_dir()


def test_every_setting_read_from_the_environment_is_in_the_configuration_table():
    """docs/configuration.md is the reference: a variable settings.py reads and the table
    leaves out is a setting nobody can find (issue 26 found five)."""
    import re

    root = Path(__file__).resolve().parents[1]
    source = (root / "kgreview" / "settings.py").read_text()
    read = set(re.findall(r'(?:env_[a-z]+\(|os\.environ\.get\()\s*"([A-Z][A-Z0-9_]+)"', source))
    table = (root / "docs" / "configuration.md").read_text()
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", table))
    assert len(read) > 60
    assert sorted(read - documented) == []


def _pg_options(tmp_path, url: str, **env) -> str:
    out = load_settings(
        tmp_path,
        shown="repr(s.DATABASES['default'].get('OPTIONS', {}).get('options'))",
        DATABASE_URL=url,
        **env,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_postgres_connections_turn_jit_and_parallel_workers_off_and_keep_the_urls_options(
    tmp_path,
):
    """A request's short queries never pay for JIT compilation (KG_PG_JIT) nor start
    parallel workers (KG_PG_PARALLEL_WORKERS); options the DATABASE_URL gives are kept."""
    plain = "'-c jit=off -c max_parallel_workers_per_gather=0'"
    assert _pg_options(tmp_path, "postgres://u@db/kg") == plain
    with_own = "postgres://u@db/kg?options=-c%20statement_timeout%3D5000"
    assert _pg_options(tmp_path, with_own) == (
        "'-c statement_timeout=5000 -c jit=off -c max_parallel_workers_per_gather=0'"
    )
    assert _pg_options(tmp_path, with_own, KG_PG_JIT="true", KG_PG_PARALLEL_WORKERS="2") == (
        "'-c statement_timeout=5000 -c max_parallel_workers_per_gather=2'"
    )


def test_the_suites_own_postgresql_connection_has_jit_and_parallel_workers_off(on_postgres):
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW jit")
        assert cursor.fetchone() == ("off",)
        cursor.execute("SHOW max_parallel_workers_per_gather")
        assert cursor.fetchone() == ("0",)
