"""Test data built through the real services, so tests exercise the same paths as users."""

from __future__ import annotations

import itertools

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from kgreview.graph import services
from kgreview.graph.models import Concept, Edge, RelationType, Source, SourceRevision

_seq = itertools.count(1)


def relation(key: str) -> RelationType:
    return RelationType.objects.get(key=key)


def concept(name: str | None = None, *, acting_user=None, **kwargs) -> Concept:
    return services.concept_create(
        name=name or f"Concept {next(_seq)}", acting_user=acting_user, **kwargs
    )


def source(
    slug: str | None = None, text: str = "Embeddings are a prerequisite for vector search.\n"
) -> Source:
    slug = slug or f"lesson-{next(_seq)}"
    return services.source_import(slug=slug, title=slug.title(), text=text, acting_user=None).source


def evidence(revision: SourceRevision, quote: str) -> services.Evidence:
    start = revision.text.index(quote)
    return services.Evidence(revision=revision, start=start, end=start + len(quote), quote=quote)


def edge(
    src: Concept,
    dst: Concept,
    rel: str = "prerequisite",
    *,
    confidence: float = 0.9,
    reason: str = "Stated in the lesson.",
    acting_user=None,
    **kwargs,
) -> Edge:
    return services.edge_create(
        source=src,
        target=dst,
        relation=relation(rel),
        confidence=confidence,
        reason=reason,
        acting_user=acting_user,
        **kwargs,
    )


def user(username: str | None = None, *, role: str | None = None, password: str = "pw-12345"):
    User = get_user_model()
    account = User.objects.create_user(
        username=username or f"user{next(_seq)}", password=password, is_staff=role == "curator"
    )
    if role:
        account.groups.add(Group.objects.get(name=role))
    return account


LESSON_TEXT = (
    "Before learning vector search you should understand embeddings.\n"
    "Retrieval-augmented generation (RAG) builds on vector search.\n"
    "Unlike keyword search, dense retrieval compares meanings.\n"
)


def lesson(slug: str | None = None, text: str = LESSON_TEXT) -> Source:
    return source(slug=slug, text=text)


def concept_proposal(name: str, *, aliases=(), doc: Source | None = None, confidence=0.9):
    from kgreview.review.services import proposal_create

    doc = doc or lesson()
    revision = doc.current_revision
    quote = next((s for s in revision.text.splitlines() if name.split()[0] in s), None)
    return proposal_create(
        kind="add_concept",
        payload={"name": name, "aliases": list(aliases), "description": ""},
        confidence=confidence,
        reason="Named in the lesson.",
        evidence=evidence(revision, quote) if quote else None,
        flags=["new_concept"],
        document=doc,
    )


def _endpoint(end) -> dict:
    from kgreview.graph.models import Concept
    from kgreview.review.models import Proposal

    if isinstance(end, Concept):
        return {"name": end.name, "concept_id": end.pk, "match": "exact", "score": 100.0}
    if isinstance(end, Proposal):
        return {"name": end.payload["name"], "proposal_id": end.pk, "match": "new"}
    return {"name": end, "match": "new"}


def edge_proposal(
    src,
    dst,
    rel: str = "prerequisite",
    *,
    doc: Source | None = None,
    quote: str = "Before learning vector search you should understand embeddings.",
    confidence: float = 0.9,
    flags=(),
):
    """An add_edge proposal; ends are Concepts, add_concept Proposals, or new names."""
    from kgreview.review.services import proposal_create

    doc = doc or lesson()
    return proposal_create(
        kind="add_edge",
        payload={"source": _endpoint(src), "target": _endpoint(dst), "relation": rel},
        confidence=confidence,
        reason="The lesson says so.",
        evidence=evidence(doc.current_revision, quote),
        flags=flags,
        document=doc,
    )
