"""The ends of an edge a person chooses: a concept, a pending concept proposal, or a name.

One rule for what a name means, shared by edits, edges added by hand and accepting: the
same name, an alias, or a spelling with the same key (a plural, a singular) is that
concept; else an open proposal for the name is; a new concept only when asked for.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q
from rapidfuzz import fuzz

from construction import keys
from construction.text import name_key
from kgreview.core.errors import ValidationFailed
from kgreview.graph import search as graph_search
from kgreview.graph import selectors as graph_selectors
from kgreview.graph import services as graph
from kgreview.graph.models import Concept
from kgreview.review.models import OPEN_STATUSES, Proposal


def concept_proposals():
    """Proposals of the kinds that propose a concept by name (``Kind.names_a_concept``).

    The registry is read when asked: the kinds' modules import this one."""
    from kgreview.review.kinds import naming_a_concept

    return Proposal.objects.filter(kind__in=naming_a_concept())


def open_concept_proposal(name: str) -> Proposal | None:
    """The open add_concept proposal for this name (or its plural/singular twin)."""
    return (
        concept_proposals()
        .filter(
            status__in=OPEN_STATUSES,
            dedup_key=keys.concept_dedup_key(name)[:255],
        )
        .order_by("pk")
        .first()
    )


def retired_name_words(name: str, concept: Concept) -> str:
    """Why a concept proposal whose name a curator retired is not accepted."""
    return (
        f'"{name}" names the concept "{concept.name}", which a curator retired; '
        "a curator can reactivate it from its page, or reject this proposal."
    )


def concept_for_name(name: str) -> Concept | None:
    """The concept a typed name means (see ``graph.selectors.concepts_for_names``)."""
    return graph_selectors.concepts_for_names([name]).get(name)


@dataclass(frozen=True)
class EndChoice:
    """How a reviewer set one end of an edge: a concept picked, a pending concept
    proposal picked, a new concept explicitly asked for, or a name typed."""

    concept_id: int | None = None
    proposal_id: int | None = None
    name: str | None = None
    create: bool = False


def same_end(source: dict, target: dict) -> bool:
    """Whether two payload ends stand for one concept: the same concept or pending concept
    proposal, or the same name whatever its case."""
    for key in ("concept_id", "proposal_id"):
        if source.get(key) is not None and source.get(key) == target.get(key):
            return True
    return str(source.get("name", "")).casefold() == str(target.get("name", "")).casefold()


def _suggestion_words(name: str) -> str:
    hits = graph_search.concept_search(q=name, limit=3)
    if not hits:
        return ""
    listed = ", ".join(f'"{h.concept.name}"' for h in hits)
    return f" Closest: {listed}."


def resolve_choice(choice: EndChoice | None, current: dict | None = None) -> dict:
    """The payload endpoint for a reviewer's choice.

    A typed name is never silently made a new concept: it must name a concept (or its
    plural/singular twin), an alias, or a pending concept proposal; otherwise the reviewer
    is told the closest names and asked to pick one or choose to create it.
    """
    if choice is None:
        if current is None:
            raise ValidationFailed("Choose a concept for each end.")
        return current
    if current is not None and (
        (choice.concept_id and choice.concept_id == current.get("concept_id"))
        or (choice.proposal_id and choice.proposal_id == current.get("proposal_id"))
    ):
        return current  # left as it was
    if choice.concept_id:
        return _picked_concept(choice.concept_id)
    if choice.proposal_id:
        return _picked_proposal(choice.proposal_id)
    return _typed_name(choice.name or "", create=choice.create, current=current)


def _picked_concept(concept_id: int) -> dict:
    """The end for a concept picked by id: it must exist and be active."""
    concept = Concept.objects.filter(pk=concept_id).first()
    if concept is None:
        raise ValidationFailed(f"There is no concept #{concept_id}.")
    if not concept.is_active:
        raise ValidationFailed(graph.inactive_words(concept))
    return {"name": concept.name, "concept_id": concept.pk, "match": "manual"}


def _picked_proposal(proposal_id: int) -> dict:
    """The end for a concept proposal picked by id: while open, the proposal; once
    accepted or superseded, the concept it stands for."""
    needed = concept_proposals().filter(pk=proposal_id).first()
    if needed is None:
        raise ValidationFailed(f"There is no concept proposal #{proposal_id}.")
    if needed.concept_id and needed.status in ("accepted", "superseded"):
        return _picked_concept(needed.concept_id)
    if not needed.is_open:
        raise ValidationFailed(
            f'The concept proposal "{needed.payload["name"]}" was {needed.status}.'
        )
    return {"name": needed.payload["name"], "proposal_id": needed.pk, "match": "manual"}


def _typed_name(typed: str, *, create: bool, current: dict | None) -> dict:
    """The end for a typed name: the concept it names, else the open proposal for it,
    else a new concept when asked for; refused in words otherwise."""
    name = graph_selectors.clean_name(typed)
    if not name:
        raise ValidationFailed("Each end needs a concept: type a name and pick one.")
    if len(name) > graph.NAME_MAX:
        raise ValidationFailed(f"A concept name is at most {graph.NAME_MAX} characters.")
    if current is not None and name.casefold() == current["name"].casefold():
        return current
    existing = concept_for_name(name)
    if existing is not None:
        if not existing.is_active:
            raise ValidationFailed(graph.inactive_words(existing))
        return {"name": existing.name, "concept_id": existing.pk, "match": "manual"}
    waiting = open_concept_proposal(name)
    if waiting is not None:
        return {"name": waiting.payload["name"], "proposal_id": waiting.pk, "match": "manual"}
    if not create:
        raise ValidationFailed(
            f'No concept is called "{name}". Pick one of the suggestions, or choose '
            f'"Create “{name}” as a new concept".' + _suggestion_words(name)
        )
    return {"name": name, "match": "new"}


# --- The concept picker ------------------------------------------------------------------


@dataclass(frozen=True)
class ConceptOption:
    """One choice in the concept picker."""

    kind: str  # concept | proposal | create
    name: str
    id: int | None = None
    detail: str = ""
    same: bool = False  # the same name key (the name itself, or its plural/singular)


def concept_options(*, q: str, limit: int = 8) -> list[ConceptOption]:
    """Choices for a typed name, best first: concepts and aliases (same-key twins such as
    plural/singular first, then exact, prefix and fuzzy matches by score), pending concept
    proposals, and, when nothing has the same key, an explicit "create it as new"."""
    q = " ".join(q.split())[:200]
    if not q:
        return []
    key = name_key(q)
    low = q.casefold()
    ranked: list[tuple[tuple, ConceptOption]] = []
    for hit in graph_search.concept_search(q=q, limit=limit):
        matched = hit.matched_name.casefold()
        same = bool(key) and key in (name_key(hit.matched_name), name_key(hit.concept.name))
        if not same and hit.match == "fuzzy" and fuzz.partial_ratio(low, matched) < 75:
            continue  # a loose fuzzy hit ("RAG" for "large lang") is noise in a picker
        if matched != hit.concept.name.casefold():
            detail = f"alias “{hit.matched_name}”"
        elif same and matched != low:
            detail = "same concept, other spelling"
        else:
            detail = {"exact": "exact", "prefix": "starts with it"}.get(hit.match, "")
            detail = detail or f"similar ({hit.score:.0f})"
        tier = 0 if same else 1 if hit.match in ("exact", "prefix") else 2
        option = ConceptOption("concept", hit.concept.name, hit.concept.pk, detail, same)
        ranked.append(((tier, -hit.score, hit.concept.name.casefold()), option))
    if key:
        wanted = keys.concept_dedup_key(q)[:255]
        pending = (
            concept_proposals()
            .filter(status__in=OPEN_STATUSES)
            .filter(Q(dedup_key=wanted) | Q(dedup_key__startswith=wanted))
            .order_by("dedup_key", "pk")
            .values_list("pk", "payload", "dedup_key")[:4]
        )
        for pk, payload, dedup in pending:
            same = dedup == wanted
            name = payload.get("name", "")
            option = ConceptOption("proposal", name, pk, f"pending concept proposal #{pk}", same)
            ranked.append(((0 if same else 1, -95.0, name.casefold()), option))
    ranked.sort(key=lambda item: item[0])
    options = [option for _, option in ranked]
    if key and not any(o.same for o in options):
        options.append(ConceptOption("create", q, None, "create it as a new concept"))
    return options
