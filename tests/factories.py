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


def concept(name: str | None = None, **kwargs) -> Concept:
    return services.concept_create(name=name or f"Concept {next(_seq)}", **kwargs)


def source(
    slug: str | None = None, text: str = "Embeddings are a prerequisite for vector search.\n"
) -> Source:
    slug = slug or f"lesson-{next(_seq)}"
    return services.source_import(slug=slug, title=slug.title(), text=text).source


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
    **kwargs,
) -> Edge:
    return services.edge_create(
        source=src,
        target=dst,
        relation=relation(rel),
        confidence=confidence,
        reason=reason,
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
