"""Assignments, the Team page and the double-review shares curators set."""

from __future__ import annotations

import pytest
from django.urls import reverse

from kgreview.core.errors import StateConflict, ValidationFailed
from kgreview.review.decide import decisions
from kgreview.review.decide.outcome import NotAllowed
from kgreview.review.models import Assignment
from tests.review.conftest import login_as as _login
from tests.review.conftest import team_edge as _edge

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}


# --- Assignments -------------------------------------------------------------------------


def test_only_curators_assign_and_bad_input_is_refused_in_words(f, team):
    from kgreview.review.team import assignments as work

    with pytest.raises(NotAllowed):
        work.assignment_create(acting_user=team["ann"], name="x", user_id=team["bob"].pk)
    cases = [
        ({"name": "", "user_id": team["ann"].pk}, "Name the assignment"),
        ({"name": "a" * 121, "user_id": team["ann"].pk}, "at most 120"),
        ({"name": "x", "query": "status=bogus", "user_id": team["ann"].pk}, "cannot be read"),
        ({"name": "x", "query": "stage=adjudicate", "user_id": team["ann"].pk}, "curators' own"),
        ({"name": "x"}, "one person or to one group"),
        ({"name": "x", "user_id": 10**9}, "no active user"),
        ({"name": "x", "user_id": team["ann"].pk, "target": 0}, "from 1"),
    ]
    for kwargs, words in cases:
        with pytest.raises(ValidationFailed, match=words):
            work.assignment_create(acting_user=team["cat"], **kwargs)
    made = work.assignment_create(
        acting_user=team["cat"],
        name="Nul\x00 name",
        query="?relation=related",
        user_id=team["ann"].pk,
    )
    assert made.name == "Nul name" and made.query == "relation=related"


def test_a_reviewers_focus_queue_serves_their_assignment_first_then_the_pool(f, team):
    from kgreview.review.team import assignments as work

    pool = [_edge(f, f"P{i}", f"Q{i}") for i in range(4)]
    mine = f.edge_proposal(f.concept("R1"), f.concept("R2"), rel="related", confidence=0.7)
    work.assignment_create(
        acting_user=team["cat"],
        name="Related ones",
        query="relation=related",
        user_id=team["ann"].pk,
        target=1,
    )
    ann = _login(team["ann"])
    page = ann.get(reverse("review:focus")).content.decode()
    assert f'data-proposal="{mine.pk}"' in page and "Related ones" in page
    assert "0 of 1 decided, 1 open" in page
    # bob has no assignment: the pool, in queue order (the newest first, at one priority)
    bob_page = _login(team["bob"]).get(reverse("review:focus")).content.decode()
    assert f'data-proposal="{pool[-1].pk}"' in bob_page
    # deciding the assignment's last card hands over to the pool
    after = ann.post(
        reverse("review:accept", args=[mine.pk]),
        {"version": 1, "q": f"relation=related&assignment={Assignment.objects.get().pk}"},
        headers=HX,
    ).content.decode()
    # on to the pool, past the window of two cards bob holds
    assert f'data-proposal="{pool[1].pk}"' in after
    progress = work.progress(Assignment.objects.get())
    assert progress.done == 1 and progress.finished


def test_a_group_assignment_counts_everyones_decisions_and_a_curator_closes_it(f, team):
    from django.contrib.auth.models import Group

    from kgreview.review.team import assignments as work

    ps = [_edge(f, f"G{i}", f"H{i}") for i in range(3)]
    group = Group.objects.get(name="reviewer")
    made = work.assignment_create(
        acting_user=team["cat"], name="All", user_id=None, group_id=group.pk, target=2
    )
    assert [a.pk for a in work.open_for(team["ann"])] == [made.pk]
    decisions.proposal_accept(proposal_id=ps[0].pk, acting_user=team["ann"])
    decisions.proposal_reject(
        proposal_id=ps[1].pk, acting_user=team["bob"], reason_code="other", note="no"
    )
    state = work.progress(made)
    assert state.done == 2 and state.finished and state.percent == 100
    assert work.progress(made, only_user=team["ann"]).done == 1
    work.assignment_close(acting_user=team["cat"], assignment_id=made.pk)
    assert work.open_for(team["ann"]) == []
    with pytest.raises(StateConflict, match="already closed"):
        work.assignment_close(acting_user=team["cat"], assignment_id=made.pk)


def test_the_team_page_for_curators_and_reviewers(f, team):
    _edge(f)
    curator = _login(team["cat"])
    page = curator.get(reverse("review:team") + "?q=relation%3Drelated")
    assert page.status_code == 200 and 'value="relation=related"' in page.content.decode()
    bad = curator.post(reverse("review:team"), {"name": "x", "assignee": "", "query": ""})
    assert bad.status_code == 400 and "Choose who the work goes to" in bad.content.decode()
    made = curator.post(
        reverse("review:team"),
        {"name": "Week 1", "assignee": f"u:{team['ann'].pk}", "query": "", "target": "5"},
    )
    assert made.status_code == 302 and Assignment.objects.filter(name="Week 1").exists()
    for hostile in ("9" * 40, "x", ""):
        gone = curator.post(reverse("review:team"), {"close": hostile})
        assert gone.status_code == 400
        assert "There is no such assignment: pick one from the list." in gone.content.decode()
    assert Assignment.objects.get(name="Week 1").closed_at is None
    reviewer_page = _login(team["ann"]).get(reverse("review:team")).content.decode()
    assert "Week 1" in reviewer_page and "0 of 5 decided" in reviewer_page
    assert "Assign part of the queue" not in reviewer_page
    refused = _login(team["bob"]).post(reverse("review:team"), {"name": "x", "assignee": "u:1"})
    assert refused.status_code == 403
    viewer = _login(f.user("vic", role="viewer"))
    assert viewer.get(reverse("review:team")).status_code == 403


def test_a_curator_sets_a_relations_share_on_the_team_page_in_percent(f, team):
    from kgreview.review.models import DoubleReview

    curator = _login(team["cat"])
    page = curator.get(reverse("review:team")).content.decode()
    assert 'id="double-review-table"' in page and "prerequisite" in page
    saved = curator.post(reverse("review:team"), {"share_relation": "related", "share": "25"})
    assert saved.status_code == 302
    assert DoubleReview.objects.get(relation__key="related").share == 0.25
    for bad, words in [("250", "percentage from 0 to 100"), ("lots", "not “lots”")]:
        refused = curator.post(reverse("review:team"), {"share_relation": "related", "share": bad})
        assert refused.status_code == 400 and words in refused.content.decode()
    unknown = curator.post(reverse("review:team"), {"share_relation": "nope", "share": "5"})
    assert "no such relation type" in unknown.content.decode()
    cleared = curator.post(reverse("review:team"), {"share_relation": "related", "share": ""})
    assert cleared.status_code == 302
    assert DoubleReview.objects.get(relation__key="related").share is None
    reviewer = _login(team["ann"])
    assert 'id="double-review-table"' not in reviewer.get(reverse("review:team")).content.decode()
    assert reviewer.post(reverse("review:team"), {"share_relation": "related"}).status_code == 403


def test_the_ontology_page_shows_and_sets_a_relations_share(f, team):
    curator = _login(team["cat"])
    saved = curator.post(
        reverse("review:team"), {"share_relation": "related", "share": "40", "next": "ontology"}
    )
    assert saved.status_code == 302 and saved["Location"].endswith("/ontology/")
    page = curator.get(saved["Location"]).content.decode()
    assert "double review: 40%" in page and 'class="double-review-form"' in page


def test_the_queues_links_follow_its_filter_and_curators_may_assign_the_view(f, team):
    _edge(f)
    curator = _login(team["cat"])
    page = curator.get(reverse("review:queue") + "?relation=related").content.decode()
    assert 'id="assign-view"' in page and "/review/team/?q=relation%3Drelated" in page
    # a filter changed by htmx swaps the links too: "Review these" reviews the new filter
    swapped = curator.get(reverse("review:queue") + "?relation=part_of", headers=HX)
    html = swapped.content.decode()
    assert 'id="queue-links" hx-swap-oob="true"' in html
    assert '/review/focus/?relation=part_of" id="start-review"' in html
    reviewer = _login(team["ann"]).get(reverse("review:queue")).content.decode()
    assert 'id="assign-view"' not in reviewer and 'id="start-review"' in reviewer
