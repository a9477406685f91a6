"""The process-manager units in deploy/ restart what dies and start what the settings
name (issue 25: the README's scaled-out steps named no supervisor, and a dead beat
stayed dead until a person restarted it)."""

from __future__ import annotations

import configparser
import shlex
from pathlib import Path

import pytest
from django.conf import settings

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
UNITS = sorted((DEPLOY / "systemd").glob("*.service"))


def unit(path: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # systemd keys are case-sensitive
    parser.read_string(path.read_text())
    return parser


def procfile() -> dict[str, str]:
    lines = (DEPLOY / "Procfile").read_text().splitlines()
    return dict(line.split(": ", 1) for line in lines if line.strip() and not line.startswith("#"))


def test_there_is_a_unit_for_web_worker_and_beat():
    assert [p.stem for p in UNITS] == ["kgreview-beat", "kgreview-web", "kgreview-worker"]
    assert {"web", "worker", "beat"} <= set(procfile())


@pytest.mark.parametrize("path", UNITS, ids=lambda p: p.stem)
def test_every_unit_restarts_its_process_whenever_it_exits(path):
    service = unit(path)["Service"]
    assert service["Restart"] == "always"
    assert 0 < int(service["RestartSec"]) <= 30
    assert service["EnvironmentFile"] == "/etc/kgreview/env"


def _scheduler(command: str) -> str:
    words = shlex.split(command)
    return words[words.index("--scheduler") + 1]


def test_beat_runs_the_scheduler_the_settings_name_in_every_unit():
    beat_unit = unit(DEPLOY / "systemd" / "kgreview-beat.service")["Service"]["ExecStart"]
    assert _scheduler(beat_unit) == settings.CELERY_BEAT_SCHEDULER
    assert _scheduler(procfile()["beat"]) == settings.CELERY_BEAT_SCHEDULER
    assert settings.CELERY_BEAT_SCHEDULER == "kgreview.agents.beat:ResilientScheduler"


def test_the_units_start_the_apps_own_entry_points():
    web = unit(DEPLOY / "systemd" / "kgreview-web.service")["Service"]["ExecStart"]
    worker = unit(DEPLOY / "systemd" / "kgreview-worker.service")["Service"]["ExecStart"]
    assert "kgreview.wsgi" in shlex.split(web)
    assert shlex.split(worker)[1:4] == ["-A", "kgreview", "worker"]
    assert "kgreview.wsgi" in procfile()["web"]
