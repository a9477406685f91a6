"""Installing a relation vocabulary (a preset or a team's file) into the graph.

A vocabulary file names every relation a graph should have active. Installing it adds
the relations that are missing, describes again those whose label, verb or description
changed, brings back retired ones it names, and retires the active relations it does
not name, all through the relation-type services (``graph.services.relations``), each
writing its curation log row, plus one row for the install itself. Nothing is deleted.

A relation is retired only while nothing stands on it: no active edge and no open
proposal. A relation that holds either, or one the file gives another shape (a
relation's shape never changes, since its history would change meaning), refuses the
whole install in words, before anything is written. Installing the same vocabulary twice
changes nothing the second time.

It lives in the review layer because "no open proposal" is the queue's to tell.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import Count

from kgreview.core import audit
from kgreview.core.errors import StateConflict
from kgreview.core.models import AuditEntry
from kgreview.graph import services as graph_services
from kgreview.graph.models import Edge, RelationType
from kgreview.graph.services.common import lock_relations
from kgreview.graph.vocabulary_files import RelationDef, Vocabulary
from kgreview.review.models import OPEN_STATUSES, Proposal

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class VocabularyRefused(StateConflict):
    """The graph cannot take this vocabulary as it stands; ``problems`` says why."""

    code = "vocabulary_refused"
    status = 409

    def __init__(self, vocabulary: Vocabulary, problems: list[str]) -> None:
        shown = "\n".join(f"  - {p}" for p in problems)
        super().__init__(
            f"The {vocabulary.name} vocabulary ({vocabulary.origin}) was not installed; "
            f"nothing was changed.\n{shown}"
        )
        self.problems = problems


@dataclass
class InstallReport:
    """What an install did, relation by relation (keys)."""

    vocabulary: str
    origin: str
    created: list[str] = field(default_factory=list)
    described: list[str] = field(default_factory=list)
    reactivated: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.created or self.described or self.reactivated or self.retired)

    def as_json(self) -> dict:
        return {
            "vocabulary": self.vocabulary,
            "origin": self.origin,
            "created": self.created,
            "described": self.described,
            "reactivated": self.reactivated,
            "retired": self.retired,
            "unchanged": self.unchanged,
        }

    def summary(self) -> str:
        parts = [
            f"{len(keys)} {what}"
            for what, keys in (
                ("added", self.created),
                ("described again", self.described),
                ("reactivated", self.reactivated),
                ("retired", self.retired),
                ("unchanged", self.unchanged),
            )
            if keys
        ]
        return f"The {self.vocabulary} vocabulary: {', '.join(parts) or 'nothing to do'}."


def _shape_words(symmetric: bool, acyclic: bool) -> str:
    if symmetric:
        return "symmetric"
    return "directed and acyclic" if acyclic else "directed"


def _in_use() -> tuple[dict[int, int], dict[str, int], dict[int, int]]:
    """Active edges per relation id, and open proposals per relation key and per id."""
    edges = dict(
        Edge.objects.filter(status=Edge.Status.ACTIVE)
        .values("relation_id")
        .annotate(n=Count("id"))
        .values_list("relation_id", "n")
    )
    open_ = Proposal.objects.filter(status__in=OPEN_STATUSES)
    by_key = dict(
        open_.exclude(relation_key="")
        .values("relation_key")
        .annotate(n=Count("id"))
        .values_list("relation_key", "n")
    )
    by_id = dict(
        open_.filter(relation__isnull=False)
        .values("relation_id")
        .annotate(n=Count("id"))
        .values_list("relation_id", "n")
    )
    return edges, by_key, by_id


def _problems(
    vocabulary: Vocabulary, existing: dict[str, RelationType]
) -> tuple[list[str], list[RelationType]]:
    """Why the vocabulary cannot be installed (empty when it can), and the active
    relations it would retire."""
    problems: list[str] = []
    for wanted in vocabulary.relations:
        have = existing.get(wanted.key)
        if have is None:
            continue
        if (have.symmetric, have.acyclic) != (wanted.symmetric, wanted.acyclic):
            problems.append(
                f"“{wanted.key}” is {_shape_words(have.symmetric, have.acyclic)} in this graph "
                f"and {_shape_words(wanted.symmetric, wanted.acyclic)} in the file; a "
                "relation's shape never changes (its edges would change meaning): give it "
                "another key, or the graph's shape"
            )
    named = set(vocabulary.keys)
    to_retire = [r for r in existing.values() if r.active and r.key not in named]
    if to_retire:
        edges, open_by_key, open_by_id = _in_use()
        for relation in to_retire:
            held = edges.get(relation.pk, 0)
            waiting = max(open_by_key.get(relation.key, 0), open_by_id.get(relation.pk, 0))
            if held or waiting:
                uses = " and ".join(
                    words
                    for n, words in (
                        (held, f"{held} active edge{'s' if held != 1 else ''}"),
                        (waiting, f"{waiting} open proposal{'s' if waiting != 1 else ''}"),
                    )
                    if n
                )
                problems.append(
                    f"“{relation.key}” is not in the file but holds {uses}; it is retired "
                    "only while nothing stands on it: add it to the file, or decide its "
                    "proposals and retire its edges first"
                )
    return problems, to_retire


def _install_one(
    wanted: RelationDef,
    have: RelationType | None,
    report: InstallReport,
    *,
    acting_user: User | None,
) -> None:
    if have is None:
        graph_services.relation_type_create(
            key=wanted.key,
            label=wanted.label,
            verb=wanted.verb,
            description=wanted.description,
            directed=wanted.directed,
            symmetric=wanted.symmetric,
            acyclic=wanted.acyclic,
            acting_user=acting_user,
        )
        report.created.append(wanted.key)
        return
    touched = False
    if not have.active:
        graph_services.relation_type_reactivate(relation=have, acting_user=acting_user)
        report.reactivated.append(wanted.key)
        touched = True
    words = (wanted.label.strip(), wanted.verb.strip(), wanted.description.strip())
    if (have.label, have.verb, have.description) != words:
        graph_services.relation_type_describe(
            relation=have,
            label=words[0],
            verb=words[1],
            description=words[2],
            acting_user=acting_user,
        )
        report.described.append(wanted.key)
        touched = True
    if not touched:
        report.unchanged.append(wanted.key)


def _install_pairs(
    vocabulary: Vocabulary, report: InstallReport, *, acting_user: User | None
) -> None:
    """Declare the file's inverse pairs the graph lacks (a file naming none leaves the
    graph's pairs be); a pair the rule book refuses is refused in its words."""
    wanted = vocabulary.inverses
    if not wanted:
        return
    rows = {r.key: r for r in RelationType.objects.select_related("inverse").filter(key__in=wanted)}
    for key in sorted(wanted):
        relation, other = rows[key], rows[wanted[key]]
        if relation.inverse_id == other.pk or key > wanted[key]:
            continue  # declared already, or declared from its pair's side
        graph_services.relation_type_pair(relation=relation, inverse=other, acting_user=acting_user)
        rows = {
            r.key: r for r in RelationType.objects.select_related("inverse").filter(key__in=wanted)
        }
        if key not in report.described and key not in report.created:
            report.described.append(key)


@transaction.atomic
def vocabulary_install(*, vocabulary: Vocabulary, acting_user: User | None) -> InstallReport:
    """Make the graph's active relations exactly ``vocabulary``'s: add, describe and
    reactivate what it names, retire what it does not (only while unused).

    ``acting_user`` is who installs it, or ``None`` for the system (a command run by the
    operator). Locks every relation row (id order) first, as a decision would, so no
    accept in an acyclic relation runs between the checks and the writes. Raises
    ``VocabularyRefused`` with every reason, having written nothing, when a relation to
    retire holds active edges or open proposals, or the file reshapes a relation. An
    install that changes nothing writes nothing, not even its log row.
    """
    lock_relations(RelationType.objects.values("pk"))
    existing = {r.key: r for r in RelationType.objects.order_by("pk")}
    problems, to_retire = _problems(vocabulary, existing)
    if problems:
        raise VocabularyRefused(vocabulary, problems)
    report = InstallReport(vocabulary=vocabulary.name, origin=vocabulary.origin)
    for wanted in vocabulary.relations:
        _install_one(wanted, existing.get(wanted.key), report, acting_user=acting_user)
    _install_pairs(vocabulary, report, acting_user=acting_user)
    for relation in sorted(to_retire, key=lambda r: r.key):
        graph_services.relation_type_retire(relation=relation, acting_user=acting_user)
        report.retired.append(relation.key)
    if not report.changed:
        return report  # nothing happened, so nothing to log
    audit.record(
        acting_user=acting_user,
        action="vocabulary.install",
        subject=("vocabulary", vocabulary.name),
        summary=report.summary(),
        after={
            "origin": vocabulary.origin,
            "relations": list(vocabulary.keys),
            **{k: v for k, v in report.as_json().items() if isinstance(v, list) and v},
        },
    )
    return report


def vocabulary_installed() -> dict | None:
    """The last vocabulary installed in this graph (its name, origin, relations and
    when), from the curation log; None when none was ever installed."""
    row = AuditEntry.objects.filter(action="vocabulary.install").order_by("-pk").first()
    if row is None:
        return None
    return {
        "name": row.subject_id,
        "origin": row.after.get("origin", ""),
        "relations": row.after.get("relations", []),
        "at": row.created_at,
    }


__all__ = ["InstallReport", "VocabularyRefused", "vocabulary_install", "vocabulary_installed"]
