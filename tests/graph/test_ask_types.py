"""Ask with concept types, on the database: a question that names a type keeps its
answers to that type and the types below it, as each concept was typed at the instant
asked; "List the lock modes" lists a type's concepts; the API's answer names the type."""

from __future__ import annotations

import pytest
from django.utils import timezone

from kgreview.graph import services
from kgreview.graph.asking import ask_graph

pytestmark = pytest.mark.django_db


@pytest.fixture
def manual(f):
    """VACUUM with three parts (a command, a subcommand type's concept, an untyped one);
    two lock modes and an untyped lock table."""
    for key, label, parent in (
        ("command", "Command", ""),
        ("subcommand", "Subcommand", "command"),
        ("lock_mode", "Lock mode", ""),
    ):
        services.concept_type_create(key=key, label=label, parent_key=parent, acting_user=None)

    def typed(name, key=""):
        c = f.concept(name)
        if key:
            services.concept_set_type(concept=c, type_key=key, acting_user=None)
        return c

    vacuum = typed("VACUUM", "command")
    full, analyze = typed("VACUUM FULL", "command"), typed("VACUUM ANALYZE")
    verbose = typed("VACUUM VERBOSE", "subcommand")
    for part in (full, analyze, verbose):
        f.edge(part, vacuum, "part_of")
    typed("ACCESS SHARE", "lock_mode")
    typed("ROW EXCLUSIVE", "lock_mode")
    typed("Lock table")
    return {"analyze": analyze}


def test_what_commands_are_part_of_vacuum_keeps_commands_and_subcommands(manual):
    answer = ask_graph("What commands are part of VACUUM?").as_json()
    assert answer["status"] == "answered"
    assert answer["answer"]["concepts"] == ["VACUUM FULL", "VACUUM VERBOSE"]
    assert answer["plan"]["type"] == "command"
    assert answer["plan"]["types"] == ["command", "subcommand"]
    assert "commands" in answer["message"] and "VACUUM ANALYZE" not in answer["message"]


def test_the_type_a_concept_had_as_of_an_instant_counts(manual):
    before = timezone.now()
    services.concept_set_type(concept=manual["analyze"], type_key="command", acting_user=None)
    now = ask_graph("What commands are part of VACUUM?").as_json()["answer"]["concepts"]
    assert "VACUUM ANALYZE" in now
    then = ask_graph("What commands are part of VACUUM?", at=before).as_json()
    assert "VACUUM ANALYZE" not in then["answer"]["concepts"]


def test_list_the_lock_modes_now_and_as_of_an_instant(manual, f):
    answer = ask_graph("List the lock modes").as_json()
    assert answer["plan"]["family"] == "members"
    assert answer["answer"]["concepts"] == ["ACCESS SHARE", "ROW EXCLUSIVE"]
    assert answer["message"].startswith("The lock modes in the graph now")
    before = timezone.now()
    later = f.concept("EXCLUSIVE")
    services.concept_set_type(concept=later, type_key="lock_mode", acting_user=None)
    assert ask_graph("List the lock modes").as_json()["answer"]["concepts"] == [
        "ACCESS SHARE",
        "EXCLUSIVE",
        "ROW EXCLUSIVE",
    ]
    then = ask_graph("What are the lock modes?", at=before).as_json()
    assert then["answer"]["concepts"] == ["ACCESS SHARE", "ROW EXCLUSIVE"]
    assert "as of" in then["message"]


def test_the_api_answers_the_type_in_its_plan(manual, f):
    from django.test import Client

    client = Client()
    client.force_login(f.user(role="viewer"))
    body = client.get("/api/v1/ask", {"q": "Which commands are part of VACUUM?"}).json()
    assert body["plan"]["type"] == "command"
    assert body["answer"]["concepts"] == ["VACUUM FULL", "VACUUM VERBOSE"]


def test_the_ask_page_says_the_type_in_the_answer_and_the_plan(manual, f):
    from django.test import Client
    from django.urls import reverse

    client = Client()
    client.force_login(f.user(role="viewer"))
    page = client.get(reverse("explorer:ask"), {"q": "What commands are part of VACUUM?"})
    body = page.content.decode()
    assert page.status_code == 200
    assert "only commands: type &#x27;command&#x27; or a type below it" in body
    assert '<dd id="ask-type"><code>command</code> and the types below it' in body
