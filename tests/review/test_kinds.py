"""The proposal kinds: the registry is complete, and each kind's own operations (columns,
dedup key, claim, view, keep, edit, blockers, the signal on accept) do what they say."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from django.conf import settings

from kgreview.core.errors import ValidationFailed
from kgreview.review.decide import decisions
from kgreview.review.decide.decisions import EdgeEdits, EndChoice
from kgreview.review.kinds import KINDS, kind_of, payload_validate
from kgreview.review.kinds.base import BlockerReads, Kind, Rows
from kgreview.review.models import Proposal
from kgreview.review.services import proposal_create
from kgreview.review.signals import relation_type_accepted

TEMPLATES = Path(settings.BASE_DIR) / "templates"
PARTS = {"row", "claim", "main", "side", "log"}
pytestmark = pytest.mark.django_db


def parts_of(kind: Kind) -> set[str]:
    text = (TEMPLATES / kind.partial).read_text()
    return set(re.findall(r"{% partialdef ([\w-]+)", text))


# --- The registry ----------------------------------------------------------------------


def test_every_proposal_kind_has_its_module_and_its_partial_and_nothing_else_is_registered():
    assert set(KINDS) == set(Proposal.KindChoice.values)
    for key, kind in KINDS.items():
        assert kind.key == key
        assert type(kind).__module__ == f"kgreview.review.kinds.{key}"
        assert (TEMPLATES / kind.partial).is_file(), kind.partial


def test_every_kind_implements_every_operation_of_a_kind():
    required = set(Kind.__abstractmethods__)
    assert required == {"apply", "undo", "claim", "view"}
    for kind in KINDS.values():
        assert not inspect.isabstract(type(kind)), kind
        assert isinstance(kind, Kind)
        for name in required:
            assert getattr(type(kind), name) is not getattr(Kind, name), (kind, name)


def test_every_partial_defines_the_same_parts_and_editable_kinds_an_edit_form():
    for kind in KINDS.values():
        expected = PARTS | ({"edit"} if kind.editable else set())
        assert parts_of(kind) == expected, kind


# --- Nothing outside the kinds names one ------------------------------------------------

ROOT = Path(settings.BASE_DIR)
# Where a kind may be named: its own package and partials, the database's choices (and
# the partial indexes on them), the migrations, the tests, and the bulk paths another
# change is reworking into a rule book (they keep their names until then).
NAMING_ALLOWED = (
    "kgreview/review/kinds/",
    "templates/review/cards/",
    "kgreview/review/models.py",
    "/migrations/",
)
# Words that are spelled like a kind but name something else: the concept page's form
# action that adds a name by hand (a curator's mend, not a proposal).
NOT_A_KIND = {
    # The writing API's public schema: its discriminated union of the kinds a submitter
    # may send needs their names as literal types (the wire format, not a branch).
    *(
        ("kgreview/api/proposal_schemas.py", key)
        for key in ("add_edge", "add_concept", "add_alias", "invalidate_edge")
    ),
    ("kgreview/review/workspace/mend_forms.py", "add_alias"),
    ("kgreview/review/workspace/mend_views.py", "add_alias"),
    ("templates/web/concept.html", "add_alias"),
}


def kind_names_in(text: str, keys) -> set[str]:
    """The kinds a source names literally: its key quoted, or its database choice
    (``KindChoice.ADD_EDGE``)."""
    found = set()
    for key in keys:
        if re.search(rf"[\"']{key}[\"']|\.{key.upper()}\b", text):
            found.add(key)
    return found


def scanned_files():
    for folder, pattern in (
        ("kgreview", "*.py"),
        ("construction", "*.py"),
        ("benchmarks", "*.py"),
        ("templates", "*.html"),
        ("static", "*.js"),
    ):
        for path in sorted((ROOT / folder).rglob(pattern)):
            name = path.relative_to(ROOT).as_posix()
            if not any(allowed in name for allowed in NAMING_ALLOWED):
                yield name, path


def test_no_module_or_template_outside_the_kinds_names_a_kind():
    """Code asks the kind (its operations, its flags, its partial's parts) instead of
    branching on its name; code that makes or reads one kind's proposals names its class's
    ``key``. So adding a kind touches its module, its partial, the registry and the choice."""
    named = []
    for name, path in scanned_files():
        for key in kind_names_in(path.read_text(), KINDS):
            if (name, key) not in NOT_A_KIND:
                named.append(f"{name}: {key}")
    assert named == []


def test_the_kind_name_scan_sees_each_way_of_naming_a_kind():
    keys = ["add_edge", "merge_concepts"]
    assert kind_names_in('if p.kind == "add_edge":', keys) == {"add_edge"}
    assert kind_names_in("{% if p.kind == 'merge_concepts' %}", keys) == {"merge_concepts"}
    assert kind_names_in("kind=Proposal.KindChoice.ADD_EDGE", keys) == {"add_edge"}
    assert kind_names_in("kind=AddEdgeKind.key, edge_kind", keys) == set()
    assert {"kgreview/review/decide/reconcile.py", "templates/web/source_detail.html"} <= {
        name for name, _ in scanned_files()
    }


def test_an_editable_kind_names_its_edit_form_and_no_other_kind_has_one():
    from django.utils.module_loading import import_string

    from kgreview.review.workspace.forms import DecisionForm

    for kind in KINDS.values():
        if kind.editable:
            assert issubclass(import_string(kind.edit_form), DecisionForm), kind
            assert kind.edit_hint.startswith("to "), kind  # "Edit it (e) to ..."
        else:
            assert kind.edit_form is None and not kind.edit_hint, kind


def test_an_unknown_kind_is_refused_in_words():
    with pytest.raises(ValidationFailed, match='"add_wish" is not a proposal kind'):
        kind_of("add_wish")
    with pytest.raises(ValidationFailed, match='"add_wish" is not a proposal kind'):
        payload_validate(kind="add_wish", payload={})


def test_the_curator_kinds_are_the_merges_the_ontology_and_concept_corrections():
    assert {
        "merge_concepts",
        "add_relation_type",
        "add_concept_type",
        "add_relation_pattern",
        "add_attribute",
        "update_concept",
    } == decisions.CURATOR_KINDS


def test_the_bulk_driver_names_no_kind_and_each_set_is_a_kinds_accept_set():
    """Bulk accept dispatches through ``Kind.accept_set``: the driver and its screen never
    name a kind, edges and concepts share one set, every other kind goes one by one."""
    review = Path(settings.BASE_DIR) / "kgreview" / "review" / "decide"
    for module in ("bulk.py", "bulk_accept.py", "bulk_check.py"):
        text = (review / module).read_text()
        named = [key for key in KINDS if f'"{key}"' in text or key.upper() in text]
        assert named == [], (module, named)
    sets = {type(kind).accept_set for kind in KINDS.values()}
    shared = type(KINDS["add_edge"]).accept_set
    assert shared is type(KINDS["add_concept"]).accept_set and len(sets) == 2
    for key, kind in KINDS.items():
        if key not in ("add_edge", "add_concept"):
            assert type(kind).accept_set is Kind.accept_set, key


# --- Columns and dedup keys ------------------------------------------------------------


def test_an_edge_proposal_keeps_its_relation_and_ends_as_keys_and_links(f):
    a = f.concept("Embeddings")
    payload = {
        "source": {"name": "Embeddings", "concept_id": a.pk, "match": "exact", "score": 100},
        "target": {"name": "Vector search", "match": "new"},
        "relation": "prerequisite",
    }
    columns = kind_of("add_edge").columns(payload, Rows({"prerequisite": 7}))
    assert columns == {
        "relation_key": "prerequisite",
        "source_key": f"c{a.pk}",
        "target_key": "n:vector search",
        "relation_id": 7,
        "source_concept_id": a.pk,
        "target_concept_id": None,
    }


def test_a_merge_points_its_source_at_the_loser_and_its_target_at_the_survivor():
    payload = {"survivor_id": 3, "loser_id": 9, "why": "Same thing."}
    columns = kind_of("merge_concepts").columns(payload, Rows())
    assert columns == {"source_concept_id": 9, "target_concept_id": 3}


def test_a_proposal_about_an_edge_names_the_edges_ends_and_nothing_when_it_is_gone(f):
    edge = f.edge(f.concept("A"), f.concept("B"))
    kind = kind_of("invalidate_edge")
    assert kind.columns({"edge_id": edge.pk}, Rows()) == {
        "source_concept_id": edge.source_id,
        "target_concept_id": edge.target_id,
        "relation_id": edge.relation_id,
    }
    assert kind.columns({"edge_id": 999999}, Rows()) == {}
    assert kind.edge_ids({"edge_id": edge.pk}) == [edge.pk]
    assert kind.edge_ids("not a payload") == []


def test_an_edge_proposals_key_orders_the_ends_only_for_a_symmetric_relation():
    kind = kind_of("add_edge")

    def key(src, dst, symmetric):
        payload = {"source": {"name": src}, "target": {"name": dst}, "relation": "r"}
        return kind.dedup_key(payload, symmetric=symmetric)

    assert key("A", "B", True) == key("B", "A", True)
    assert key("A", "B", False) != key("B", "A", False)


def test_a_kind_without_its_own_key_keys_the_whole_payload():
    kind = kind_of("update_edge")
    first = kind.dedup_key({"edge_id": 1, "weight": 2.0})
    assert first.startswith("update_edge:")
    assert first == kind.dedup_key({"weight": 2.0, "edge_id": 1})
    assert first != kind.dedup_key({"edge_id": 1, "weight": 3.0})


def test_a_merge_naming_a_missing_concept_is_not_queued(f):
    keep = f.concept("Keep")
    with pytest.raises(ValidationFailed, match="do not exist: #999999"):
        proposal_create(
            kind="merge_concepts",
            payload={"survivor_id": keep.pk, "loser_id": 999999, "why": "Same."},
            confidence=0.9,
        )


# --- Deciding ------------------------------------------------------------------------


def test_keeping_the_other_concept_swaps_a_merge_and_keeping_the_suggested_one_changes_nothing():
    kind = kind_of("merge_concepts")
    payload = {"survivor_id": 3, "loser_id": 9, "why": "Same thing."}
    assert kind.keep(payload, 9) == {"survivor_id": 9, "loser_id": 3, "why": "Same thing."}
    assert kind.keep(payload, 3) is None
    with pytest.raises(ValidationFailed, match="one of the two being merged"):
        kind.keep(payload, 5)
    assert kind_of("add_edge").keep({"source": {}}, 3) is None


def test_editing_an_edge_swaps_its_ends_and_refuses_a_relation_that_is_not_active(f):
    a, b = f.concept("Alpha"), f.concept("Beta")
    proposal = f.edge_proposal(a, b)
    kind = kind_of(proposal)
    swapped = kind.edited(proposal, EdgeEdits(swap_direction=True, weight=2.0))
    assert (swapped["source"]["concept_id"], swapped["target"]["concept_id"]) == (b.pk, a.pk)
    assert swapped["weight"] == 2.0
    with pytest.raises(ValidationFailed, match='"nonsense" is not an active relation'):
        kind.edited(proposal, EdgeEdits(relation="nonsense"))
    picked = kind.edited(proposal, EdgeEdits(target=EndChoice(concept_id=f.concept("Gamma").pk)))
    assert picked["target"]["name"] == "Gamma"


def test_only_an_editable_kind_can_be_edited():
    assert [key for key, kind in KINDS.items() if kind.editable] == ["add_concept", "add_edge"]
    with pytest.raises(ValidationFailed, match="Only edge and new-concept proposals can be edited"):
        kind_of("add_concept").edited(None, EdgeEdits())
    with pytest.raises(ValidationFailed, match="Only edge and new-concept proposals can be edited"):
        kind_of("merge_concepts").edited(None, EdgeEdits())


def test_a_proposal_about_a_missing_or_retired_edge_is_blocked_in_words(f):
    edge = f.edge(f.concept("A"), f.concept("B"))
    kind = kind_of("invalidate_edge")
    reads = BlockerReads(edges={edge.pk: edge})
    missing = Proposal(kind="invalidate_edge", payload={"edge_id": 999999})
    assert kind.blockers(missing, reads) == ["Edge #999999 does not exist."]
    here = Proposal(kind="invalidate_edge", payload={"edge_id": edge.pk})
    assert kind.blockers(here, reads) == []
    edge.status = "invalidated"
    assert kind.blockers(here, reads) == [f"Edge #{edge.pk} is no longer active (invalidated)."]


def test_a_merge_of_a_concept_that_is_gone_is_blocked_in_words(f):
    keep = f.concept("Keep")
    kind = kind_of("merge_concepts")
    payload = {"survivor_id": keep.pk, "loser_id": 424242, "why": "Same."}
    reads = BlockerReads()
    kind.blocker_reads(payload, reads)
    assert reads.concept_ids == {keep.pk, 424242}
    reads.concepts = {keep.pk: keep}
    words = kind.blockers(Proposal(kind="merge_concepts", payload=payload), reads)
    assert words == ["Concept #424242 does not exist."]


def test_accepting_a_relation_type_tells_the_listeners_once_the_decision_commits(
    f, django_capture_on_commit_callbacks
):
    heard = []

    def listener(sender, *, key, **kwargs):
        heard.append(key)

    relation_type_accepted.connect(listener, dispatch_uid="test-listener")
    try:
        p = proposal_create(
            kind="add_relation_type",
            payload={"key": "enables", "label": "Enables", "verb": "enables"},
            confidence=0.9,
        )
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            decisions.proposal_accept(proposal_id=p.pk, acting_user=f.user("cora", role="curator"))
        assert heard == []  # not before the commit
        for callback in callbacks:
            callback()
        assert heard == ["enables"]
    finally:
        relation_type_accepted.disconnect(dispatch_uid="test-listener")


# --- Words and views ------------------------------------------------------------------


def test_each_kind_says_its_claim_in_words(f):
    a, b = f.concept("Alpha"), f.concept("Beta")
    edge = f.edge(a, b)
    cases = [
        (f.edge_proposal(a, b), "Alpha is a prerequisite for Beta"),
        (f.concept_proposal("Gamma"), "New concept Gamma"),
        (
            proposal_create(
                kind="invalidate_edge",
                payload={"edge_id": edge.pk, "reason_code": "other"},
                confidence=0.9,
            ),
            f"Retire edge #{edge.pk}: Alpha is a prerequisite for Beta",
        ),
        (
            proposal_create(
                kind="merge_concepts",
                payload={"survivor_id": a.pk, "loser_id": b.pk, "why": "Same."},
                confidence=0.9,
            ),
            "Merge Beta into Alpha",
        ),
        (
            proposal_create(
                kind="add_relation_type",
                payload={"key": "enables", "label": "Enables", "verb": "enables"},
                confidence=0.9,
            ),
            "New relation Enables (“source enables target”)",
        ),
        (
            proposal_create(
                kind="update_concept",
                payload={"concept_id": a.pk, "name": "Alef", "add_aliases": ["A"]},
                confidence=0.9,
            ),
            "Alpha: rename to Alef; add A",
        ),
    ]
    for proposal, words in cases:
        assert kind_of(proposal).claim(proposal) == words


def test_an_edge_proposals_row_shows_its_ends_and_its_relation_in_words(f):
    proposal = f.edge_proposal(f.concept("Alpha"), "Brand new", rel="builds_on")
    assert kind_of(proposal).view(proposal) == {
        "source_name": "Alpha",
        "target_name": "Brand new",
        "relation_key": "builds_on",
        "relation_words": "builds on",
    }


def test_a_cycle_breaking_invalidation_says_the_cycle_is_its_evidence(f):
    from kgreview.review.workspace.card import proposal_card

    a, b = f.concept("A"), f.concept("B")
    edge = f.edge(a, b)
    p = proposal_create(
        kind="invalidate_edge",
        payload={"edge_id": edge.pk, "reason_code": "cycle", "cycle_edge_ids": [edge.pk]},
        confidence=0.9,
    )
    card = proposal_card(Proposal.objects.get(pk=p.pk))
    assert card.no_quote == "No quote of its own: the cycle below is the evidence."
    assert card.view["edge"] == edge
    assert [e for e, _ in card.view["cycle"]] == [edge]
