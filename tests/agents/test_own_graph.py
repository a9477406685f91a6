"""A team's own graph and the demo, each in a database that says whose it is: the checks
that keep them apart (names, folders, databases, documents), the first start's record,
and the first curator's account. End to end, with real processes: test_own_graph_e2e.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.test import RequestFactory

from kgreview.agents import own_graph
from kgreview.agents.own_graph import GraphRefused
from kgreview.core.models import AuditEntry

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("demo", "“demo” is the demo's name"),
        ("Acme", "cannot name a graph"),
        ("../demo", "cannot name a graph"),
        ("", "cannot name a graph"),
        ("a" * 64, "cannot name a graph"),
        ("-acme", "cannot name a graph"),
    ],
)
def test_a_graph_name_is_a_plain_folder_name_and_never_the_demos(name, words):
    """Refused in words before anything is made."""
    with pytest.raises(GraphRefused, match=words):
        own_graph.check_name(name)


def test_good_names_pass():
    """Lowercase letters, digits, hyphens and underscores."""
    for name in ("acme", "platform-docs", "team_2", "7seas"):
        own_graph.check_name(name)


def test_a_team_graph_never_lives_in_the_demos_folder_or_var_itself(settings, tmp_path):
    """The demo's folder, var/ (the old demo's) and a folder named otherwise are refused;
    the graph's own folder passes."""
    base = Path(settings.BASE_DIR)
    settings.VAR_DIR = base / "var" / "demo"
    with pytest.raises(GraphRefused, match="is the demo's folder"):
        own_graph.check_team_folder("acme")
    settings.VAR_DIR = base / "var"
    with pytest.raises(GraphRefused, match="is var/ itself"):
        own_graph.check_team_folder("acme")
    settings.VAR_DIR = tmp_path / "graphs" / "beta"
    with pytest.raises(GraphRefused, match="is not the folder of the graph “acme”"):
        own_graph.check_team_folder("acme")
    settings.VAR_DIR = tmp_path / "graphs" / "acme"
    own_graph.check_team_folder("acme")
    settings.VAR_DIR = base / "var" / "graphs" / "acme"
    own_graph.check_team_folder("acme")


def test_the_demo_never_lives_in_a_team_graphs_folder(settings):
    """var/graphs/NAME is a team's."""
    settings.VAR_DIR = Path(settings.BASE_DIR) / "var" / "graphs" / "acme"
    with pytest.raises(GraphRefused, match="is the team graph “acme”'s folder"):
        own_graph.check_demo_folder()


def test_a_new_database_may_become_a_team_graph_then_only_that_one():
    """Empty: a new graph. Once started as acme: acme again, never beta, never the demo."""
    assert own_graph.check_team_database("acme") is None
    own_graph.graph_mark(name="acme", kind="team", vocabulary="documentation")
    found = own_graph.check_team_database("acme")
    assert found is not None and (found.name, found.kind, found.vocabulary) == (
        "acme",
        "team",
        "documentation",
    )
    with pytest.raises(GraphRefused, match="is the graph “acme”'s, started"):
        own_graph.check_team_database("beta")
    with pytest.raises(GraphRefused, match="is the team graph “acme”'s; the sample curriculum"):
        own_graph.check_demo_database()


def test_the_demos_database_is_refused_as_a_team_graph():
    """The demo's first start marks it; a team's graph is refused there, in words."""
    own_graph.graph_mark(name="demo", kind="demo", vocabulary="curriculum")
    with pytest.raises(GraphRefused, match="is the demo's: it holds the sample curriculum"):
        own_graph.check_team_database("acme")
    assert own_graph.check_demo_database().is_demo


def test_a_database_holding_the_sample_curriculum_without_a_record_is_refused(f):
    """An older `make run`'s database (lessons of the corpus, no start record) is not a
    team's empty graph, and the refusal names the sample curriculum."""
    f.source(slug="embeddings")
    with pytest.raises(GraphRefused, match=r"the sample curriculum \(1 of its lessons\)"):
        own_graph.check_team_database("acme")
    assert own_graph.check_demo_database() is None  # the demo may take it over


def test_a_database_holding_other_documents_is_refused_as_both(f):
    """Documents that are not the sample curriculum, never started as a graph: neither a
    new team graph nor the demo takes them."""
    f.source(slug="postgres-manual")
    with pytest.raises(GraphRefused, match="already holds 1 document and was never started"):
        own_graph.check_team_database("acme")
    with pytest.raises(GraphRefused, match=r"holds 1 document\(s\) that are not the sample"):
        own_graph.check_demo_database()


def test_the_start_is_recorded_once_in_the_curation_log():
    """One graph.start row, in words; a second mark writes nothing."""
    row = own_graph.graph_mark(name="acme", kind="team", vocabulary="documentation")
    assert row is not None
    assert row.summary == "Started the team graph “acme” with the documentation vocabulary."
    assert own_graph.graph_mark(name="acme", kind="team", vocabulary="curriculum") is None
    assert AuditEntry.objects.filter(action="graph.start").count() == 1


def test_the_sample_curriculum_is_never_a_teams_documents(tmp_path):
    """corpus/, a file in it and a folder holding it are refused; the team's folder passes."""
    corpus = own_graph.corpus_dir()
    for path in (corpus, corpus / "embeddings.md", corpus.parent):
        with pytest.raises(GraphRefused, match="holds the sample curriculum"):
            own_graph.check_documents([str(path)])
    own_graph.check_documents([str(tmp_path)])


def test_the_first_curator_is_made_once_with_a_password_shown_once():
    """No curator yet: one is made (staff, in the curator group) and its password given;
    then the curators are listed and no password is shown."""
    names, made = own_graph.curator_account(username="alice")
    assert names == ["alice"] and made is not None and len(made.password) >= 16
    user = get_user_model().objects.get(username="alice")
    assert user.is_staff and list(user.groups.values_list("name", flat=True)) == ["curator"]
    request = RequestFactory().post("/login/")
    assert authenticate(request, username="alice", password=made.password) == user
    assert AuditEntry.objects.get(action="user.create").summary.startswith(
        "Made the curator account “alice”"
    )
    again, none = own_graph.curator_account(username="bob")
    assert again == ["alice"] and none is None


def test_an_account_of_that_name_that_is_not_a_curator_is_said(f):
    """The name is taken by a viewer: refused in words, the viewer unchanged."""
    f.user("alice", role="viewer")
    with pytest.raises(GraphRefused, match="already an account “alice” that is not a curator"):
        own_graph.curator_account(username="alice")


def test_the_default_curator_is_the_login_name(monkeypatch):
    """Made a username; "curator" when the login name is unknown or unusable."""
    monkeypatch.setattr(own_graph.getpass, "getuser", lambda: "Ada Lovelace")
    assert own_graph.default_curator_name() == "ada-lovelace"
    monkeypatch.setattr(own_graph.getpass, "getuser", lambda: "…")
    assert own_graph.default_curator_name() == "curator"
