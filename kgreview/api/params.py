"""Reading the API's parameters: instants, concept ids and relation keys, each refused
in words (an ``ApiError``) when the graph cannot answer for it."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import StringConstraints

from kgreview.core.errors import ValidationFailed
from kgreview.core.forms import BIGGEST_INT
from kgreview.core.instants import aware_utc
from kgreview.graph.models import Concept, RelationType
from kgreview.graph.selectors import edges_active, edges_as_of

from .app import ApiError

Direction = Literal["out", "in", "both"]

# Text parameters hold no control characters: ``core.middleware`` refuses them with a 400
# in words before an operation runs, and the published schema says so.
TEXT_PATTERN = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]*$"
Text = Annotated[str, StringConstraints(pattern=TEXT_PATTERN)]


def instant(value: datetime | None, name: str = "as_of") -> datetime | None:
    """The instant as an aware UTC time, or None for "now"; 400 when out of range."""
    if value is None:
        return None
    try:
        return aware_utc(value)
    except ValidationFailed as exc:
        raise ApiError(400, f"{name}: {exc.message}") from None


def concept_or_404(pk: int) -> Concept:
    """The concept with this id, whatever its status (a merged one leads on)."""
    if not 1 <= pk <= BIGGEST_INT:  # no row has it, and SQLite cannot be asked
        raise ApiError(404, f"There is no concept with id {pk}.")
    concept = Concept.objects.select_related("merged_into").filter(pk=pk).first()
    if concept is None:
        raise ApiError(404, f"There is no concept with id {pk}.")
    return concept


def relation_ids(keys: list[str] | None) -> tuple[list[int], list[str]]:
    """The ids and keys of the named relation types, in the order given, without repeats;
    an unknown key is a 400 that lists the known ones."""
    if not keys:
        return [], []
    wanted = list(dict.fromkeys(k.strip() for k in keys if k and k.strip()))
    found = dict(RelationType.objects.filter(key__in=wanted).values_list("key", "pk"))
    missing = [k for k in wanted if k not in found]
    if missing:
        known = ", ".join(RelationType.objects.order_by("key").values_list("key", flat=True))
        raise ApiError(400, f"Unknown relation {', '.join(missing)}. Known relations: {known}.")
    return [found[k] for k in wanted], wanted


def edges_at(at: datetime | None):
    """The edges of the graph now (active ones), or as it stood at ``at``."""
    return edges_active() if at is None else edges_as_of(at=at)
