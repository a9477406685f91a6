"""Kept seeds: a benchmark's seeded database is copied next time, byte for byte."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

from django.db import connection

from benchmarks import seeds
from benchmarks.curriculum import seed_curriculum

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, random
from benchmarks import seeds
from benchmarks.common import scratch_database
from benchmarks.curriculum import seed_curriculum, seed_proposals
from kgreview.graph.models import Edge
from kgreview.review.models import Proposal

names = [f"Concept {i} TAG" for i in range(300)]
out = []
for _ in range(2):
    with scratch_database():
        rng = random.Random(5)
        graph = seed_curriculum(rng=rng, names=names, edges=1200)
        made = seed_proposals(graph, 150)
        out.append({
            "log": [(s["step"], s["how"], s["template"]) for s in seeds.LOG],
            "ids": graph.ids,
            "next_draw": rng.random(),
            "edges": sorted(Edge.objects.values_list("source_id", "target_id", "relation_id")),
            "proposals": [made, Proposal.objects.count()],
        })
print(json.dumps(out))
"""


def test_a_seeded_curriculum_and_its_proposals_are_copied_the_second_time(on_postgres, tmp_path):
    tag = uuid.uuid4().hex[:8]
    env = {**os.environ, "KG_VAR_DIR": str(tmp_path), "KG_BENCH_SEEDS": "1"}
    env["DATABASE_URL"] = env.get("DATABASE_URL", "")
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", SCRIPT.replace("TAG", tag)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    first, second = json.loads(done.stdout.strip().splitlines()[-1])
    try:
        assert [how for _, how, _ in first["log"]] == ["seeded", "seeded"]
        assert [how for _, how, _ in second["log"]] == ["copied", "copied"]
        assert first["ids"] == second["ids"]
        assert first["edges"] == second["edges"] and len(first["edges"]) == 1200
        assert first["proposals"] == second["proposals"] == [150, 150]
        # The random generator goes on where seeding left it, copied or not.
        assert first["next_draw"] == second["next_draw"]
    finally:
        with connection._nodb_cursor() as cursor:
            for _, _, template in first["log"]:
                cursor.execute(f'DROP DATABASE IF EXISTS "{template}" WITH (FORCE)')


def test_seeding_in_a_test_database_never_keeps_a_seed(on_postgres):
    seed_curriculum(concepts=60, edges=200)
    assert not seeds.enabled()
    assert seeds.LOG == []
