"""Merge chains (issue 25): A merged into B, then B into C. Every place that follows a
merge (the concept page, the concept list, the explorer, the API, name resolution, the
refusals' words, exports) leads A to C, the concept its names and edges live on now,
through one rule (``graph.selectors.final_survivor_ids``)."""

from __future__ import annotations

import logging
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from kgreview.api.services import api_token_create
from kgreview.core.errors import ConceptNotActive
from kgreview.exports.writers import records
from kgreview.graph import selectors, services
from kgreview.graph.models import Concept, ConceptAlias

pytestmark = pytest.mark.django_db


@pytest.fixture
def chain(f):
    """A merged into B, then B into C; ``before`` is an instant before both merges."""
    a, b, c = f.concept("Alpha"), f.concept("Beta"), f.concept("Gamma")
    services.concept_add_alias(concept=a, name="First letter", acting_user=None)
    before = timezone.now()
    services.concept_merge(loser=a, survivor=b, acting_user=None)
    services.concept_merge(loser=b, survivor=c, acting_user=None)
    a.refresh_from_db()
    b.refresh_from_db()
    assert a.merged_into_id == b.pk  # the row keeps the merge that happened
    return {"a": a, "b": b, "c": c, "before": before}


def viewer(f) -> Client:
    client = Client()
    client.force_login(f.user(role="viewer"))
    return client


def test_one_rule_follows_a_chain_to_its_end(chain):
    a, b, c = chain["a"], chain["b"], chain["c"]
    assert selectors.final_survivor_ids([a.pk, b.pk, c.pk]) == {a.pk: c.pk, b.pk: c.pk}
    assert selectors.survivor_of(a) == c
    assert selectors.survivor_of(c) is None


def test_a_cycle_written_past_the_services_ends_and_is_logged(f, caplog):
    x, y = f.concept("Ex"), f.concept("Why")
    now = timezone.now()
    Concept.objects.filter(pk=x.pk).update(status="merged", merged_into=y, merged_at=now)
    Concept.objects.filter(pk=y.pk).update(status="merged", merged_into=x, merged_at=now)
    with caplog.at_level(logging.WARNING, logger="kgreview.graph.selectors"):
        ends = selectors.final_survivor_ids([x.pk, y.pk])
    assert ends == {x.pk: y.pk, y.pk: x.pk}  # each row's own merged_into
    assert any("do not end within" in r.getMessage() for r in caplog.records)


def test_a_chain_longer_than_the_limit_is_not_followed_past_it(f, caplog):
    rows = [f.concept(f"Link {i}") for i in range(selectors.MERGE_CHAIN_LIMIT + 2)]
    now = timezone.now()
    for loser, survivor in zip(rows, rows[1:], strict=False):
        Concept.objects.filter(pk=loser.pk).update(
            status="merged", merged_into=survivor, merged_at=now
        )
    with caplog.at_level(logging.WARNING, logger="kgreview.graph.selectors"):
        ends = selectors.final_survivor_ids([rows[0].pk, rows[2].pk])
    assert ends[rows[0].pk] == rows[1].pk  # too long: its own merged_into
    assert ends[rows[2].pk] == rows[-1].pk  # within the limit: the end


def test_the_concept_page_of_a_leads_to_c(f, chain):
    a, b, c = chain["a"], chain["b"], chain["c"]
    html = viewer(f).get(reverse("concept-detail", args=[a.pk])).content.decode()
    note = re.search(r'<p class="flash warn" id="merged-into">(.*?)</p>', html, re.S).group(1)
    assert f'href="/concepts/{b.pk}/"' in note  # the merge that happened
    assert f'href="/concepts/{c.pk}/"' in note and "live on" in note  # where they live now
    assert "Its names belong to" in html
    names = re.search(r'<ul class="proposal-list" id="concept-names">(.*?)</ul>', html, re.S)
    assert f'href="/concepts/{c.pk}/"' in names.group(1)


def test_the_concept_list_says_a_was_merged_into_c(f, chain):
    html = viewer(f).get(reverse("concepts"), {"show": "merged"}).content.decode()
    row = re.search(r"<tr[^>]*>(?:(?!</tr>).)*Alpha(?:(?!</tr>).)*</tr>", html, re.S).group(0)
    assert f'href="/concepts/{chain["c"].pk}/"' in row and "Gamma" in row
    assert "Beta</a>" not in row


def test_the_explorer_page_of_a_leads_to_c(f, chain):
    html = viewer(f).get(reverse("explorer:concept", args=[chain["a"].pk])).content.decode()
    merged = re.search(r'<p class="flash warn" id="ex-merged">(.*?)</p>', html, re.S).group(1)
    assert f'href="/explore/{chain["c"].pk}/"' in merged
    assert f'href="/explore/{chain["b"].pk}/"' not in merged


def test_the_api_says_a_lives_on_c(f, chain):
    secret = api_token_create(owner=f.user(role="viewer"), name="bot", acting_user=None).secret
    agent = Client(headers={"Authorization": f"Bearer {secret}"})
    for loser in (chain["a"], chain["b"]):
        body = agent.get(f"/api/v1/concepts/{loser.pk}").json()
        assert body["status"] == "merged"
        assert body["merged_into"]["id"] == chain["c"].pk
        assert body["merged_into"]["name"] == "Gamma"


def test_a_names_resolve_to_c(chain):
    c = chain["c"]
    assert selectors.concept_by_name(name="Alpha") == c
    assert selectors.concept_by_name(name="first letter") == c
    assert selectors.concepts_for_names(["Alpha", "Beta", "First letter"]) == {
        "Alpha": c,
        "Beta": c,
        "First letter": c,
    }


def test_a_refusal_to_use_a_names_c(f, chain):
    with pytest.raises(ConceptNotActive, match='"Alpha" was merged into "Gamma"'):
        services.concept_merge(loser=chain["a"], survivor=f.concept("Delta"), acting_user=None)


def test_an_export_from_before_the_merges_says_a_lives_on_c(chain):
    at = chain["before"] + timedelta(microseconds=1)
    rows = {r["id"]: r for r in records.concept_records(at=at, stats=records.ExportStats())}
    assert rows[chain["a"].pk]["merged_into"] == chain["c"].pk
    assert rows[chain["b"].pk]["merged_into"] == chain["c"].pk
    assert rows[chain["c"].pk]["merged_into"] is None


def test_undoing_the_merges_of_a_chain_one_by_one_gives_each_concept_its_names_back(chain):
    a, b, c = chain["a"], chain["b"], chain["c"]
    services.concept_unmerge(loser=b, acting_user=None)
    names = dict(ConceptAlias.objects.values_list("name", "concept_id"))
    assert names == {"Alpha": b.pk, "First letter": b.pk, "Beta": b.pk, "Gamma": c.pk}
    assert selectors.concept_by_name(name="Alpha") == b  # A is still merged into B
    services.concept_unmerge(loser=a, acting_user=None)
    assert selectors.concept_by_name(name="Alpha") == a
    assert selectors.concept_by_name(name="First letter") == a
    kinds = dict(ConceptAlias.objects.filter(concept=a).values_list("name", "kind"))
    assert kinds == {"Alpha": "canonical", "First letter": "alias"}
    assert set(ConceptAlias.objects.filter(concept=b).values_list("name", flat=True)) == {"Beta"}


def test_an_export_lists_a_names_on_c_only_from_when_b_was_merged_into_c(chain):
    a, b, c = chain["a"], chain["b"], chain["c"]
    b_merged = Concept.objects.get(pk=b.pk).merged_at
    between = Concept.objects.get(pk=a.pk).merged_at + (b_merged - a.merged_at) / 2
    then = {r["id"]: r for r in records.concept_records(at=between, stats=records.ExportStats())}
    assert "Alpha" not in then[c.pk]["aliases"] and "First letter" not in then[c.pk]["aliases"]
    now = {
        r["id"]: r for r in records.concept_records(at=timezone.now(), stats=records.ExportStats())
    }
    assert {"Alpha", "First letter", "Beta"} <= set(now[c.pk]["aliases"])
