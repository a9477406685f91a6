"""Reads of the graph. Nothing here writes."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import Count, Q, QuerySet
from django.db.models.functions import Lower

from construction.text import normal_name
from construction.types import RelationSpec
from kgreview.core.tally import tally

from .models import Concept, ConceptAlias, Edge, RelationType, Source
from .rules import fact_keys

log = logging.getLogger(__name__)


def clean_name(name: str) -> str:
    """The stored form of a name (``construction.text.normal_name``): NFC, no invisible or
    reordering characters, runs of whitespace collapsed, ends trimmed. Every service that
    makes, renames or looks up a concept or alias goes through it."""
    return normal_name(name)


def concept_by_name(*, name: str) -> Concept | None:
    """The concept a name (canonical, alias or merged-away name) resolves to, if any.

    Aliases always point at an active concept: a merge moves them to the survivor.
    """
    owner = name_owner(name=name)
    return owner.concept if owner else None


def name_owner(*, name: str) -> ConceptAlias | None:
    """The alias row (with its concept) holding a name, compared case-insensitively."""
    return (
        ConceptAlias.objects.select_related("concept")
        .annotate(lname=Lower("name"))
        .filter(lname=clean_name(name).lower())
        .first()
    )


def concepts_for_names(names) -> dict[str, Concept]:
    """The concept each name means, by the resolver's rule: the same name or alias (any
    case), else a name with the same key (a plural, a singular). Inactive concepts too;
    names nobody answers to are left out. Two queries for any number of names."""
    from construction.text import name_key

    names = list(dict.fromkeys(names))
    if not names:
        return {}
    by_name = {
        a.lname: a.concept
        for a in ConceptAlias.objects.select_related("concept")
        .annotate(lname=Lower("name"))
        .filter(lname__in=[clean_name(n).lower() for n in names])
    }
    wanted = {n: name_key(n)[:200] for n in names if clean_name(n).lower() not in by_name}
    by_key: dict[str, Concept] = {}
    if any(wanted.values()):
        for a in (
            ConceptAlias.objects.select_related("concept")
            .filter(key__in=[k for k in wanted.values() if k])
            .order_by("kind", "pk")
        ):
            by_key.setdefault(a.key, a.concept)
    out = {}
    for n in names:
        concept = by_name.get(clean_name(n).lower()) or by_key.get(wanted.get(n, ""))
        if concept is not None:
            out[n] = concept
    return out


#: The longest chain of merges followed (A into B, B into C, ...). The services never write
#: a cycle of merges, but a row written past them could, and a walk must end.
MERGE_CHAIN_LIMIT = 64


@dataclass(frozen=True)
class ChainStep:
    """One concept on a chain of merges: where it went, and when (None: it is not merged)."""

    concept_id: int
    merged_into_id: int | None
    merged_at: datetime | None


def merge_chains(ids: Iterable[int]) -> dict[int, list[ChainStep]]:
    """For each of ``ids``, its chain of merges from itself on (A, then B it went into,
    then C ...), at most ``MERGE_CHAIN_LIMIT`` merges long. One recursive query per 500
    ids, and one for the concepts met, on both databases."""
    wanted = sorted({int(i) for i in ids if i is not None})
    table = Concept._meta.db_table
    out: dict[int, list[ChainStep]] = {}
    for first in range(0, len(wanted), 500):
        chunk = wanted[first : first + 500]
        marks = ", ".join(["%s"] * len(chunk))
        sql = f"""
            WITH RECURSIVE chain(start, node, depth) AS (
                SELECT id, id, 0 FROM {table} WHERE id IN ({marks})
                UNION ALL
                SELECT chain.start, c.merged_into_id, chain.depth + 1
                FROM chain JOIN {table} c ON c.id = chain.node
                WHERE c.merged_into_id IS NOT NULL AND chain.depth < %s
            )
            SELECT start, node FROM chain ORDER BY start, depth
        """
        with connection.cursor() as cursor:
            cursor.execute(sql, [*chunk, MERGE_CHAIN_LIMIT])
            rows = cursor.fetchall()
        # Each concept's merge read through the ORM: aware times on both databases.
        merges = {
            pk: (into, at)
            for pk, into, at in Concept.objects.filter(
                pk__in={int(node) for _, node in rows}
            ).values_list("pk", "merged_into_id", "merged_at")
        }
        for begin, node in rows:
            into, at = merges.get(int(node), (None, None))
            out.setdefault(int(begin), []).append(ChainStep(int(node), into, at))
    return out


def final_survivor_ids(ids: Iterable[int]) -> dict[int, int]:
    """The one rule for where a merged concept lives now: for each of ``ids`` that is
    merged, the end of its chain of merges (A merged into B, then B into C: C). Concepts
    that are not merged are left out.

    A chain that does not end within ``MERGE_CHAIN_LIMIT`` merges (a cycle, or a chain
    written past the services) is not followed: it answers the concept's own
    ``merged_into``, and says so in the log."""
    out: dict[int, int] = {}
    for begin, steps in merge_chains(ids).items():
        own = steps[0].merged_into_id
        if own is None:
            continue
        end = steps[-1]
        if end.merged_into_id is None:
            out[begin] = end.concept_id
            continue
        log.warning(
            "The merges from concept #%s do not end within %s steps (a cycle, or a chain "
            "written past the services); its own merged_into (#%s) is used.",
            begin,
            MERGE_CHAIN_LIMIT,
            own,
        )
        out[begin] = own
    return out


def arrived_at(pairs: Iterable[tuple[int, int]]) -> dict[tuple[int, int], datetime | None]:
    """For each (concept, holder) pair, when the concept's names came to ``holder``: the
    time of the merge into ``holder`` on the concept's chain (A into B at t1, B into C at
    t2: A's names came to C at t2). None when the chain does not reach ``holder``."""
    pairs = list(pairs)
    chains = merge_chains(begin for begin, _ in pairs)
    out: dict[tuple[int, int], datetime | None] = {}
    for begin, holder in pairs:
        out[(begin, holder)] = next(
            (s.merged_at for s in chains.get(begin, []) if s.merged_into_id == holder), None
        )
    return out


def merged_under(concept_id: int) -> set[int]:
    """The concepts merged into ``concept_id``, directly or through others (A into B, B
    into C: A and B are under C), as far as ``MERGE_CHAIN_LIMIT`` merges away."""
    found: set[int] = set()
    frontier = {int(concept_id)}
    for _ in range(MERGE_CHAIN_LIMIT):
        frontier = (
            set(Concept.objects.filter(merged_into__in=frontier).values_list("pk", flat=True))
            - found
            - {int(concept_id)}
        )
        if not frontier:
            break
        found |= frontier
    return found


def with_survivors(concepts: Iterable[Concept]) -> list[Concept]:
    """``concepts``, each merged one with ``survivor`` set to the concept its names and
    edges live on now (``final_survivor_ids``); two queries whatever their number, none
    when none is merged. Every page, API answer and export that follows a merge reads it
    here."""
    concepts = list(concepts)
    merged = [c for c in concepts if c.merged_into_id is not None]
    if not merged:
        return concepts
    ends = final_survivor_ids(c.pk for c in merged)
    rows = Concept.objects.in_bulk(set(ends.values()))
    for c in merged:
        c.survivor = rows.get(ends.get(c.pk, c.merged_into_id))
    return concepts


def survivor_of(concept: Concept) -> Concept | None:
    """The concept a merged concept's names and edges live on now; None for one that is
    not merged."""
    if concept.merged_into_id is None:
        return None
    return with_survivors([concept])[0].survivor


def edges_active() -> QuerySet[Edge]:
    return Edge.objects.filter(status=Edge.Status.ACTIVE)


def edges_as_of(*, at: datetime) -> QuerySet[Edge]:
    """The edges the graph asserted at time ``at``.

    An edge counts when the graph had recorded it by ``at``, the fact already held at
    ``at`` (``valid_at``), and it had not been retired (``invalid_at``) by then.
    Superseded and invalidated rows therefore still answer questions about the past.
    """
    return Edge.objects.filter(recorded_at__lte=at, valid_at__lte=at).filter(
        Q(invalid_at__isnull=True) | Q(invalid_at__gt=at)
    )


def fact_q(source_id: int, relation: RelationType, target_id: int) -> Q:
    """The edges stating this fact (``rules.fact_keys``: itself, its inverse twin, a
    symmetric one either way round), as a filter."""
    forms = [
        Q(source_id=s, relation_id=r, target_id=t)
        for s, r, t in fact_keys(source_id, relation, target_id)
    ]
    q = forms[0]
    for form in forms[1:]:
        q |= form
    return q


def active_edge_between(*, source_id: int, target_id: int, relation: RelationType) -> Edge | None:
    """The active edge holding this fact: its own, in either direction for a symmetric
    relation, or its inverse twin (``fact_q``); the row's relation says which."""
    return edges_active().filter(fact_q(source_id, relation, target_id)).first()


def active_edges_holding(
    facts: Iterable[tuple[int, RelationType, int]],
) -> dict[tuple[int, int, int], Edge]:
    """``active_edge_between`` for many facts in one query: for each (source id,
    relation, target id) whose fact an active edge holds, that edge (the lowest id, as
    ``active_edge_between`` answers), keyed by (source id, relation id, target id).

    Read as the active edges among the facts' concepts in their relations (and the
    inverses), matched in memory: no chain of ORs, which SQLite caps in depth."""
    forms = {(s, relation.pk, t): fact_keys(s, relation, t) for s, relation, t in facts}
    if not forms:
        return {}
    ids = {end for held in forms.values() for s, _, t in held for end in (s, t)}
    relation_ids = {r for held in forms.values() for _, r, _ in held}
    by_fact: dict[tuple[int, int, int], Edge] = {}
    rows = edges_active().filter(source_id__in=ids, target_id__in=ids, relation_id__in=relation_ids)
    for edge in rows.order_by("pk"):
        by_fact.setdefault((edge.source_id, edge.relation_id, edge.target_id), edge)
    found: dict[tuple[int, int, int], Edge] = {}
    for fact, held in forms.items():
        edges = [by_fact[form] for form in held if form in by_fact]
        if edges:
            found[fact] = min(edges, key=lambda e: e.pk)
    return found


def relation_path(
    *, relation: RelationType, start_id: int, goal_id: int, within: Iterable[int]
) -> list[int] | None:
    """The shortest chain of concept ids from start to goal along active edges of
    ``relation`` that stays among the concepts ``within`` (start and goal included), or
    None (see ``relation_chain``)."""
    chain = relation_chain(relation=relation, start_id=start_id, goal_id=goal_id, within=within)
    return [cid for cid, _ in chain] if chain is not None else None


def relation_chain(
    *, relation: RelationType, start_id: int, goal_id: int, within: Iterable[int]
) -> list[tuple[int, str]] | None:
    """``relation_path`` with each concept's name: (id, name) from start to goal, or None.

    One query for the edges among the concepts (and their names), then a breadth-first
    search in memory: callers pass the concepts a bounded search already found
    (``edge_precheck``), so this is only ever the words of a refusal, never a walk of the
    graph.
    """
    among = sorted({*within, start_id, goal_id})
    rows = (
        edges_active()
        .filter(relation=relation, source_id__in=among, target_id__in=among)
        .order_by("pk")
        .values_list("source_id", "target_id", "source__name", "target__name")
    )
    following: dict[int, list[int]] = {}
    names: dict[int, str] = {}
    for src, dst, src_name, dst_name in rows:
        following.setdefault(src, []).append(dst)
        names[src], names[dst] = src_name, dst_name
    parents: dict[int, int] = {start_id: start_id}
    frontier = [start_id]
    while frontier and goal_id not in parents:
        widened = []
        for src in frontier:
            for dst in following.get(src, ()):
                if dst not in parents:
                    parents[dst] = src
                    widened.append(dst)
        frontier = widened
    if goal_id not in parents:
        return None
    path = [goal_id]
    while path[-1] != start_id:
        path.append(parents[path[-1]])
    return [(cid, names.get(cid, f"#{cid}")) for cid in reversed(path)]


@dataclass(frozen=True)
class RelationRow:
    id: int
    active: bool
    spec: RelationSpec


def relation_table() -> list[RelationRow]:
    """Every relation type (retired ones too: their edges still exist), in one query."""
    return [
        RelationRow(
            id=r.pk,
            active=r.active,
            spec=RelationSpec(
                key=r.key,
                label=r.label,
                verb=r.verb,
                description=r.description,
                symmetric=r.symmetric,
                acyclic=r.acyclic,
                inverse=r.inverse.key if r.inverse_id else "",
            ),
        )
        for r in RelationType.objects.select_related("inverse").order_by("key")
    ]


def concept_names(ids: Iterable[int]) -> dict[int, str]:
    return dict(Concept.objects.filter(pk__in=list(ids)).values_list("pk", "name"))


def source_list() -> QuerySet:
    """Sources by title with their revision count, for the curriculum page."""
    return (
        Source.objects.select_related("current_revision")
        .defer("current_revision__text", "current_revision__structure")
        .annotate(n_revisions=Count("revisions"), ltitle=Lower("title"))
        .order_by("ltitle", "slug")
    )


def graph_totals() -> dict[str, int]:
    """Sources, active concepts and active edges, counted."""
    return {
        "sources": Source.objects.count(),
        "concepts": Concept.objects.filter(status=Concept.Status.ACTIVE).count(),
        "edges": edges_active().count(),
    }


CONCEPT_PAGE = 100


def active_edge_counts(ids) -> dict[int, int]:
    """Active edges touching each concept (in or out), for every id given; two grouped
    queries. A self-loop counts twice, once per end."""
    ids = list(ids)
    counts = dict.fromkeys(ids, 0)
    if not ids:
        return counts
    for end in ("source_id", "target_id"):
        for cid, n in tally(edges_active().filter(**{f"{end}__in": ids}), end).items():
            counts[cid] += n
    return counts


def concept_page(
    *, q: str = "", show: str = "active", after: str = "", types: set[int] | None = None
) -> tuple[list, str]:
    """A page of concepts in name order (keyset on the name), with their edge counts and
    their type; ``types``: only concepts of these types (an empty set: untyped ones)."""
    from .models import SourceConcept

    qs = Concept.objects.all()
    if types is not None:
        qs = qs.filter(type_id__in=types) if types else qs.filter(type__isnull=True)
    if show in ("active", "orphans"):
        qs = qs.filter(status=Concept.Status.ACTIVE)
    elif show in ("merged", "retired"):
        qs = qs.filter(status=show)
    if show == "orphans":
        qs = qs.exclude(
            Q(outgoing_edges__status=Edge.Status.ACTIVE)
            | Q(incoming_edges__status=Edge.Status.ACTIVE)
        )
    if q:
        qs = qs.filter(Q(name__icontains=q) | Q(aliases__name__icontains=q)).distinct()
    if after:
        qs = qs.filter(name__gt=after)
    rows = list(qs.select_related("merged_into", "type").order_by("name")[: CONCEPT_PAGE + 1])
    with_survivors(rows)
    more = len(rows) > CONCEPT_PAGE
    rows = rows[:CONCEPT_PAGE]
    ids = [c.pk for c in rows]
    counts = active_edge_counts(ids)
    sources = tally(SourceConcept.objects.filter(concept_id__in=ids), "concept_id")
    for c in rows:
        c.edge_count = counts.get(c.pk, 0)
        c.source_count = sources.get(c.pk, 0)
    return rows, (rows[-1].name if more and rows else "")


def concept_profile(concept: Concept) -> dict:
    """What the graph knows of a concept: names, edges both ways, sources, merges. (Its
    open proposals are review's: ``kgreview.review.workspace.pending.open_proposals_touching``.)"""
    from .models import SourceConcept

    edges = list(
        Edge.objects.filter(Q(source=concept) | Q(target=concept), status=Edge.Status.ACTIVE)
        .select_related("source", "target", "relation")
        .order_by("relation__key", "pk")[:300]
    )
    return {
        "concept": concept,
        "names": list(concept.aliases.order_by("kind", "name")),
        "outgoing": [e for e in edges if e.source_id == concept.pk],
        "incoming": [e for e in edges if e.target_id == concept.pk],
        "retired_edges": Edge.objects.filter(Q(source=concept) | Q(target=concept))
        .exclude(status=Edge.Status.ACTIVE)
        .count(),
        "sources": list(
            SourceConcept.objects.filter(concept=concept)
            .select_related("source", "revision")
            .defer("revision__text")
            .order_by("source__slug")
        ),
        "merged_from": list(concept.merged_from.order_by("name")),
    }


def relation_overview() -> list[RelationType]:
    """Every relation type with its active edges counted, active ones first."""
    return list(
        RelationType.objects.select_related("inverse")
        .annotate(
            active_edges=Count("edges", filter=Q(edges__status=Edge.Status.ACTIVE), distinct=True)
        )
        .order_by("-active", "key")
    )
