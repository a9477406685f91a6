"""Proposals planted through the real service, then dated and decided as tests need."""

from __future__ import annotations

import itertools
from datetime import datetime

from django.utils import timezone

from kgreview.agents.models import AgentRun
from kgreview.agents.runs import run_origin
from kgreview.review.models import OPEN_STATUSES, Proposal
from kgreview.review.services import proposal_create

_names = itertools.count(1)


def plant(
    *,
    confidence: float,
    rel: str = "prerequisite",
    status: str | None = None,
    run: AgentRun | None = None,
    created: datetime | None = None,
    decided: datetime | None = None,
    kind: str = "add_edge",
) -> Proposal:
    """A proposal queued through the real service, then moved to ``status`` and dated.

    ``created_at`` is set by the database on insert, so it (and ``decided_at``) is
    rewritten with ``QuerySet.update``, as an import of old data would.
    """
    n = next(_names)
    if kind == "add_edge":
        payload = {
            "source": {"name": f"Planted source {n}", "match": "new"},
            "target": {"name": f"Planted target {n}", "match": "new"},
            "relation": rel,
        }
    else:
        payload = {"name": f"Planted concept {n}", "aliases": [], "description": ""}
    proposal = proposal_create(
        kind=kind,
        payload=payload,
        confidence=confidence,
        reason="Planted.",
        origin=None if run is None else run_origin(run),
    )
    fields: dict = {}
    if created is not None:
        fields["created_at"] = created
    if status is not None and status not in OPEN_STATUSES:
        fields.update(status=status, decided_at=decided or timezone.now())
    if fields:
        Proposal.objects.filter(pk=proposal.pk).update(**fields)
        proposal.refresh_from_db()
    return proposal


def run(agent: str = "construct", provider: str = "openai", model: str = "gpt-4o-mini"):
    return AgentRun.objects.create(agent=agent, provider=provider, model=model)
