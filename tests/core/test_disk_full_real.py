"""A really full disk, not a patched write (issue 25, finding 7: the red team ran the
embedded runtime with ``var/`` on a 64 MB disk; decisions, logins and the API answered
500 and ``/healthz`` said ok).

The embedded runtime's database and ``var/`` live on a 64 MB tmpfs mounted by the test
(root only: CI runs as root). A reviewer's accept on the full disk is a 503 in words
and changes nothing; ``/healthz`` names the disk; once space is freed, the same accept
goes through. A process of its own runs it, so the suite's database is never on the
small disk.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.agents import helpers
from tests.conftest import require

pytestmark = pytest.mark.services

SCRIPT = r"""
import errno, json, os
import django
django.setup()
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
call_command("migrate", verbosity=0)
from tests import factories as f
from kgreview.review.models import Proposal
from kgreview.agents.runs import worker_heartbeat_record

reviewer = f.user("rev", role="reviewer")
proposal = f.concept_proposal("Embeddings")
client = Client(raise_request_exception=False)
client.force_login(reviewer)
worker_heartbeat_record(hostname="disk-test", pid=os.getpid())

from django.db import connection
with connection.cursor() as cursor:  # an empty write-ahead log: every write needs new space
    cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
filler = os.path.join(os.environ["KG_VAR_DIR"], "filler")
with open(filler, "wb") as out:
    try:
        while True:
            out.write(b"\0" * (1 << 20))
            out.flush()
    except OSError as exc:
        assert exc.errno == errno.ENOSPC, exc
accept = reverse("review:accept", args=[proposal.pk])
full = client.post(accept, {"version": proposal.version})
health = client.get("/healthz")
status_when_full = Proposal.objects.get(pk=proposal.pk).status
os.remove(filler)
freed = client.post(accept, {"version": proposal.version})
print("RESULT " + json.dumps({
    "full": [full.status_code, full.content.decode()],
    "health": [health.status_code, json.loads(health.content)],
    "status_when_full": status_when_full,
    "freed": freed.status_code,
    "status_after": Proposal.objects.get(pk=proposal.pk).status,
}))
"""


def test_a_really_full_disk_refuses_a_decision_in_words_and_healthz_says_so():
    require(os.geteuid() == 0, "needs root to mount a small disk")
    mount = Path(tempfile.mkdtemp(prefix="kg-small-disk-"))
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mount)], capture_output=True
    )
    require(mounted.returncode == 0, f"cannot mount a tmpfs: {mounted.stderr.decode().strip()}")
    try:
        env = helpers.subprocess_env(
            DJANGO_SETTINGS_MODULE="kgreview.settings_test",
            DATABASE_URL=f"sqlite:///{mount}/kgreview.sqlite3",
            KG_VAR_DIR=str(mount / "var"),
            CELERY_BROKER_URL="filesystem://",
        )
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT],
            cwd=helpers.ROOT, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
        assert line is not None, done.stdout[-3000:] + done.stderr[-3000:]
        result = json.loads(line[len("RESULT ") :])
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)
        shutil.rmtree(mount, ignore_errors=True)
    status, body = result["full"]
    assert status == 503, body[:500]
    assert "The server&#x27;s disk is full: nothing was saved." in body or (
        "The server's disk is full: nothing was saved." in body
    )
    assert result["status_when_full"] == "pending"  # nothing was saved
    health_status, health = result["health"]
    assert health_status == 503 and "disk" in health["down"]
    assert result["freed"] in (200, 302)
    assert result["status_after"] == "accepted"
