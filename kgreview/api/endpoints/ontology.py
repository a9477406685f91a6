"""The relation vocabulary: /v1/relations."""

from __future__ import annotations

from datetime import datetime

from kgreview.graph import history
from kgreview.graph.models import RelationType

from .. import schemas as s
from ..app import answers, api, served
from ..params import instant
from ..serializers import relation_out


@api.get("/v1/relations", response=answers(list[s.RelationOut]), tags=["ontology"])
@served
def relations(request, as_of: datetime | None = None):
    """The relation vocabulary (at ``as_of``): what each type means and how it behaves."""
    at = instant(as_of)
    qs = RelationType.objects.all() if at is None else history.relations_as_of(at=at)
    return [relation_out(r, at=at) for r in qs.order_by("key")]
