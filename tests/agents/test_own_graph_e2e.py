"""`manage.py graph` end to end, with real processes in a temporary folder: the demo and
two teams' graphs side by side, each in its own folder and SQLite database; the demo's
database untouched by the teams; nothing of the demo in a team's graph, and a name the
demo knows resolving only to the team's own proposals; a second start reusing the
graph; refusals in words; the graph served with a worker and beat like `make run`."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from construction.text import name_key
from tests.agents import helpers
from tests.agents.test_embedded import get_json

ACME_DOCS = {
    "maintenance.md": (
        "# Routine maintenance\n\n"
        "Autovacuum uses the statistics collector. A B-tree index is a kind of index.\n"
        "CREATE SUBSCRIPTION requires the REPLICATION privilege.\n"
        "Vector search uses **embeddings**.\n"
    ),
}
BETA_DOCS = {
    "runbook.md": "# Runbook\n\nThe deploy step requires the build step.\nCanary uses metrics.\n",
}
BETA_VOCABULARY = (
    "name: beta-ops\n"
    "relations:\n"
    "  - {key: requires, label: requires, verb: requires, acyclic: true}\n"
    "  - {key: uses, label: uses, verb: uses}\n"
    "  - {key: related, label: related to, verb: is related to, symmetric: true}\n"
)


def _env(var_dir: Path, **extra: str) -> dict[str, str]:
    env = helpers.subprocess_env(KG_VAR_DIR=str(var_dir), **extra)
    for key in ("DATABASE_URL", "CELERY_BROKER_URL", "KG_CACHE_URL"):
        if key not in extra:
            env.pop(key, None)
    return env


def graph(var_dir: Path, *args: str, check: bool = True, **extra: str):
    """`manage.py graph ...` with KG_VAR_DIR=var_dir, as `make graph` runs it."""
    done = subprocess.run(
        [helpers.PYTHON, "manage.py", "graph", *args],
        cwd=helpers.ROOT,
        env=_env(var_dir, **extra),
        capture_output=True,
        text=True,
        timeout=600,
    )
    if check and done.returncode != 0:
        raise AssertionError(f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr}")
    return done


def rows(var_dir: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(var_dir / "kgreview.sqlite3") as db:
        return list(db.execute(sql))


def snapshot(var_dir: Path) -> dict[str, object]:
    """What a database holds, to tell whether anything wrote to it."""
    tables = ("graph_source", "graph_sourcerevision", "review_proposal", "core_auditentry")
    counts = {t: rows(var_dir, f"SELECT COUNT(*), MAX(id) FROM {t}")[0] for t in tables}
    counts["migrations"] = rows(var_dir, "SELECT COUNT(*) FROM django_migrations")[0]
    return counts


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("own")
    var = root / "var"
    docs = {"acme": root / "acme-docs", "beta": root / "beta-docs"}
    for team, files in (("acme", ACME_DOCS), ("beta", BETA_DOCS)):
        docs[team].mkdir()
        for name, text in files.items():
            (docs[team] / name).write_text(text)
    (root / "beta.yaml").write_text(BETA_VOCABULARY)
    demo = var / "demo"
    first_demo = graph(demo, "--demo", "--no-serve")
    before = snapshot(demo)
    acme = var / "graphs" / "acme"
    first_acme = graph(acme, "acme", "--docs", str(docs["acme"]), "--no-serve", "--curator", "ann")
    beta = var / "graphs" / "beta"
    graph(beta, "beta", "--docs", str(docs["beta"]), "--vocabulary", str(root / "beta.yaml"),
          "--no-serve", "--curator", "bo")  # fmt: skip
    return {
        "root": root,
        "docs": docs,
        "demo": demo,
        "acme": acme,
        "beta": beta,
        "demo_before": before,
        "first_demo": first_demo.stdout,
        "first_acme": first_acme.stdout,
    }


pytestmark = [pytest.mark.services, pytest.mark.own_database]


def test_each_graph_has_its_own_folder_database_broker_and_key(world):
    """Three folders, each with its SQLite file, broker folders and secret key."""
    keys = set()
    for name in ("demo", "acme", "beta"):
        folder = world[name]
        assert (folder / "kgreview.sqlite3").exists(), name
        assert (folder / "broker" / "queue").is_dir(), name
        keys.add((folder / "secret_key").read_text())
    assert len(keys) == 3


def test_the_demo_holds_the_sample_curriculum_and_says_it_is_the_demo(world):
    """The sample lessons, the curriculum's relations, the demo accounts."""
    demo = world["demo"]
    assert rows(demo, "SELECT COUNT(*) FROM graph_source")[0][0] == 34
    assert rows(demo, "SELECT subject_id FROM core_auditentry WHERE action='graph.start'") == [
        ("demo",)
    ]
    active = {k for (k,) in rows(demo, "SELECT key FROM graph_relationtype WHERE active")}
    assert "prerequisite" in active and "is_a" not in active
    assert "Demo accounts" in world["first_demo"]


def test_a_team_graph_starts_empty_with_its_vocabulary_and_only_its_documents(world):
    """acme: the documentation vocabulary, its one manual, proposals drafted from it, a
    curator; beta: its own file's relations; neither holds a lesson of the demo."""
    acme, beta = world["acme"], world["beta"]
    assert rows(acme, "SELECT slug FROM graph_source") == [("maintenance",)]
    assert rows(beta, "SELECT slug FROM graph_source") == [("runbook",)]
    acme_active = {k for (k,) in rows(acme, "SELECT key FROM graph_relationtype WHERE active")}
    assert acme_active == {
        "is_a",
        "part_of",
        "requires",
        "uses",
        "produces",
        "configures",
        "alternative_to",
        "contrasts_with",
        "related",
    }
    beta_active = {k for (k,) in rows(beta, "SELECT key FROM graph_relationtype WHERE active")}
    assert beta_active == {"requires", "uses", "related"}
    edges = rows(acme, "SELECT payload FROM review_proposal WHERE kind='add_edge'")
    relations = {json.loads(p)["relation"] for (p,) in edges}
    assert relations and relations <= acme_active
    assert "Curator account: ann, password " in world["first_acme"]
    assert rows(acme, "SELECT username, is_staff FROM auth_user") == [("ann", 1)]
    for team in (acme, beta):
        assert rows(team, "SELECT COUNT(*) FROM graph_concept")[0][0] == 0  # nothing accepted


def test_a_name_the_demo_knows_resolves_only_to_the_teams_own_proposals(world):
    """ "Embeddings" is a concept proposal of the demo; in acme the edge's end is a new
    name, proposed by acme's own add_concept proposal, never the demo's."""
    demo, acme = world["demo"], world["acme"]
    demo_names = {
        name_key(json.loads(p)["name"])
        for (p,) in rows(demo, "SELECT payload FROM review_proposal WHERE kind='add_concept'")
    }
    assert name_key("Embeddings") in demo_names
    concepts = {
        pk: json.loads(p)["name"]
        for pk, p in rows(acme, "SELECT id, payload FROM review_proposal WHERE kind='add_concept'")
    }
    ends = [
        end
        for (p,) in rows(acme, "SELECT payload FROM review_proposal WHERE kind='add_edge'")
        for end in (json.loads(p)["source"], json.loads(p)["target"])
    ]
    embeddings = [e for e in ends if name_key(e["name"]) == name_key("Embeddings")]
    assert embeddings, ends
    for end in ends:
        assert end["match"] == "new" and end["concept_id"] is None
        assert concepts[end["proposal_id"]] == end["name"]


def test_the_teams_left_the_demos_database_untouched(world):
    """Same rows, same ids, same migrations as before the teams started."""
    assert snapshot(world["demo"]) == world["demo_before"]


def test_starting_the_same_graph_again_reuses_it(world):
    """No new revision, run, proposal, vocabulary change or start record; the curator is
    named, not made again."""
    acme = world["acme"]
    before = snapshot(acme)
    runs = rows(acme, "SELECT COUNT(*) FROM agents_agentrun")
    again = graph(acme, "acme", "--docs", str(world["docs"]["acme"]), "--no-serve")
    assert snapshot(acme) == before
    assert rows(acme, "SELECT COUNT(*) FROM agents_agentrun") == runs
    assert "Opened the graph started" in again.stdout
    assert "0 new, 0 revised, 1 unchanged" in again.stdout
    assert "Curators: ann." in again.stdout and "Curator account:" not in again.stdout


def test_a_changed_document_is_read_again_on_the_next_start(world):
    """A revised manual adds a revision and one construction run over it alone."""
    acme = world["acme"]
    runs = rows(acme, "SELECT COUNT(*) FROM agents_agentrun")[0][0]
    page = world["docs"]["acme"] / "maintenance.md"
    page.write_text(page.read_text() + "The WAL writer is part of the server.\n")
    again = graph(acme, "acme", "--docs", str(world["docs"]["acme"]), "--no-serve")
    assert "0 new, 1 revised" in again.stdout
    assert rows(acme, "SELECT COUNT(*) FROM agents_agentrun")[0][0] == runs + 1


@pytest.mark.parametrize(
    ("case", "words"),
    [
        ("demo-name", "“demo” is the demo's name"),
        ("demo-database", "is the demo's: it holds the sample curriculum"),
        ("sample-documents", "holds the sample curriculum, which is the demo's"),
        ("demo-into-team", "is the team graph “acme”'s; the sample curriculum never goes"),
        ("other-graphs-database", "is the graph “acme”'s, started"),
        ("wrong-folder", "is not the folder of the graph “gamma”"),
    ],
)
def test_pointing_a_graph_at_the_demo_or_another_graph_is_refused(world, case, words):
    """Each refused in words, exit status 1, and the database it pointed at untouched."""
    demo, acme = world["demo"], world["acme"]
    gamma = world["root"] / "var" / "graphs" / "gamma"
    demo_url = f"sqlite:///{demo / 'kgreview.sqlite3'}"
    acme_url = f"sqlite:///{acme / 'kgreview.sqlite3'}"
    runs = {
        "demo-name": lambda: graph(demo, "demo", "--no-serve", check=False),
        "demo-database": lambda: graph(
            gamma, "gamma", "--no-serve", check=False, DATABASE_URL=demo_url
        ),
        "sample-documents": lambda: graph(
            acme, "acme", "--docs", str(helpers.ROOT / "corpus"), "--no-serve", check=False
        ),
        "demo-into-team": lambda: graph(
            demo, "--demo", "--no-serve", check=False, DATABASE_URL=acme_url
        ),
        "other-graphs-database": lambda: graph(
            gamma, "gamma", "--no-serve", check=False, DATABASE_URL=acme_url
        ),
        "wrong-folder": lambda: graph(acme, "gamma", "--no-serve", check=False),
    }
    before = {name: snapshot(world[name]) for name in ("demo", "acme")}
    done = runs[case]()
    assert done.returncode == 1
    assert words in done.stderr
    assert "Traceback" not in done.stderr
    assert {name: snapshot(world[name]) for name in ("demo", "acme")} == before


def test_the_graph_is_served_with_a_worker_and_beat_like_make_run(world):
    """Without --no-serve: the web server answers, beat schedules, the worker runs, all on
    the team's own database."""
    acme = world["acme"]
    port = helpers.free_port()
    server = helpers.start(
        [helpers.PYTHON, "manage.py", "graph", "acme", "--port", str(port)],
        _env(acme, KG_HEARTBEAT_SECONDS="2"),
        world["root"] / "serve.log",
    )
    url = f"http://127.0.0.1:{port}/healthz"
    try:
        health = helpers.wait_for(
            lambda: (h := get_json(url)) and h["worker"]["alive"] and h,
            timeout=180,
            what="the team graph's web server, beat and worker",
            proc=server,
        )
        assert health["database"] == "ok"
        assert rows(acme, "SELECT COUNT(*) FROM agents_workerheartbeat")[0][0] >= 1
    except AssertionError:
        print((world["root"] / "serve.log").read_text()[-6000:])
        raise
    finally:
        code = helpers.stop(server, timeout=40)
    assert code == 0
    assert not (world["demo"] / "broker" / "queue").exists() or not any(
        (world["demo"] / "broker" / "queue").iterdir()
    )
