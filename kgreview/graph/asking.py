"""Asking the graph a question: the ask loop's ``GraphReader`` over the database, the
question name index, and the service ``ask_graph``.

The loop itself is pure (``construction.ask.loop.ask``); this module gives it the graph
as it stood at one instant (or now), the names of the concepts the graph has accepted,
and a planner and critic (offline rules, or an OpenAI-compatible model). Everything here
reads; nothing writes.

Each read is one round trip: a hop (``expand``) is one query that also joins the
evidence revision for the quote, its source's slug and the revision's number; a path is
``traversal.shortest_path`` (two walks and a trace) plus one query for the evidence; a
study order is ``learning.learning_path`` plus one query for names and one for evidence.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db import connection

from construction.ask.typed import TypeSpec
from construction.ask.types import Answer, ConceptFact, EdgeFact, Retrieval, Walk
from construction.text import normal_name, without_controls
from construction.types import RelationSpec
from kgreview.core.errors import DomainError, ValidationFailed
from kgreview.core.llm import client_settings

from . import history, learning, traversal
from .models import Concept, ConceptType, ConceptTypeChange, Edge, Source, SourceRevision
from .name_index import QUESTION_INDEX
from .selectors import RelationRow, relation_table

PROVIDERS = ("offline", "openai")


class ModelUnavailable(DomainError):
    """The model planner or critic could not be used (unreachable, misconfigured, or its
    answers stayed invalid); nothing was answered."""

    code = "model_unavailable"
    status = 503


STUDY_WALKS = (Walk("prerequisite", "in"), Walk("builds_on", "out"))  # what orders study
PREFETCH_EDGES = 20  # a prefetch reads at most this many edges per concept of its limit


# --- The reader -------------------------------------------------------------------------


def _marks(values: Sequence) -> str:
    return ", ".join(["%s"] * len(values))


_one_of = traversal.one_of


_seed_rows = traversal.id_rows


@dataclass
class _Reach:
    """What one set of walks has read so far in this reader: for every concept in
    ``done``, all the edges that step from it (``steps``)."""

    done: set[int] = field(default_factory=set)
    steps: dict[int, list[EdgeFact]] = field(default_factory=lambda: defaultdict(list))
    hops: int = 0

    def keep(self, facts: Sequence[EdgeFact], nodes: Sequence[int], ways: tuple[set, set]) -> None:
        """File each edge under the concepts among ``nodes`` it steps from (``ways``: the
        relation keys walked out, and those walked in), and mark ``nodes`` done: the
        caller read every edge stepping from them."""
        here = set(nodes) - self.done
        out_keys, in_keys = ways
        for fact in facts:
            if fact.source_id in here and fact.relation in out_keys:
                self.steps[fact.source_id].append(fact)
            if fact.target_id in here and fact.relation in in_keys:
                self.steps[fact.target_id].append(fact)
        self.done |= here


class DbGraphReader:
    """The graph as it stood at ``at`` (now when None), as the ask loop reads it.

    Edges count as ``traversal`` counts them: active ones now, or those recorded and
    valid by ``at`` and not yet retired. Concepts are active unless merged or retired by
    the instant.
    """

    def __init__(self, at: datetime | None = None, *, relations: list[RelationRow] | None = None):
        self.at = at
        self._rows = relation_table() if relations is None else list(relations)
        self._by_key = {row.spec.key: row for row in self._rows}
        self._key_of = {row.id: row.spec.key for row in self._rows}
        self._reach: dict[traversal.Groups, _Reach] = {}
        self._known: dict[int, ConceptFact] = {}
        self._absent: set[int] = set()
        self._edge_known: dict[int, EdgeFact] = {}

    # relations -----------------------------------------------------------------------

    def relations(self) -> Sequence[RelationSpec]:
        """The active vocabulary now; every relation type for a past instant (edges of a
        relation retired since still answer for the past)."""
        return [row.spec for row in self._rows if row.active or self.at is not None]

    def _groups(self, walks: Sequence[Walk]) -> traversal.Groups:
        """The walks as traversal's groups: relation ids by direction (symmetric ones
        both ways), in a fixed order so the SQL is the same for the same walks."""
        by_direction: dict[str, set[int]] = defaultdict(set)
        for walk in walks:
            row = self._by_key.get(walk.relation)
            if row is None:
                continue
            direction = "both" if row.spec.symmetric else walk.direction
            by_direction[direction].add(row.id)
        # Symmetric relations sit in "both", so no group needs traversal's symmetric flag.
        order = [d for d in ("out", "in", "both") if by_direction[d]]
        return tuple((d, tuple(sorted(by_direction[d])), False) for d in order)

    # concepts ------------------------------------------------------------------------

    def concepts(self, ids: Iterable[int]) -> dict[int, ConceptFact]:
        """Names and status at the instant; each concept is read once per reader."""
        wanted = {int(i) for i in ids}
        missing = sorted(wanted - self._known.keys() - self._absent)
        if missing:
            self._read_concepts(missing)
        return {i: self._known[i] for i in sorted(wanted) if i in self._known}

    # types ---------------------------------------------------------------------------

    def concept_types(self, ids: Iterable[int]) -> dict[int, str | None]:
        """Each concept's type key at the instant (``history.concept_types_at``): one
        query, asked only for a question that names a type."""
        found = history.concept_types_at(sorted({int(i) for i in ids}), at=self.at)
        return {pk: (t.key if t is not None else None) for pk, t in found.items()}

    def concepts_of_types(
        self, keys: Sequence[str], *, limit: int
    ) -> tuple[tuple[ConceptFact, ...], bool]:
        """The concepts active at the instant whose type then was one of ``keys``, by
        name: now, ``Concept.type``; in the past, the concepts whose type history ever
        named one of them by then, kept when their last change by then still does."""
        if self.at is None:
            rows = (
                Concept.objects.filter(status=Concept.Status.ACTIVE, type__key__in=list(keys))
                .order_by("name", "pk")
                .values_list("pk", flat=True)[: limit + 1]
            )
            ids = list(rows)
        else:
            named = ConceptTypeChange.objects.filter(
                type__key__in=list(keys), changed_at__lte=self.at
            ).values_list("concept_id", flat=True)
            then = history.concept_types_at(sorted(set(named)), at=self.at)
            ids = [pk for pk, t in then.items() if t is not None and t.key in keys]
        facts = [f for f in self.concepts(ids).values() if f.active]
        facts.sort(key=lambda f: (f.name, f.concept_id))
        return tuple(facts[:limit]), len(facts) > limit

    def _read_concepts(self, ids: list[int]) -> None:
        columns = ("pk", "name", "status", "merged_at", "retired_at")
        if connection.vendor == "postgresql":  # one array parameter (see ``_one_of``)
            with connection.cursor() as cursor:  # timestamptz: aware datetimes, as the ORM's
                cursor.execute(
                    "SELECT id, name, status, merged_at, retired_at"
                    f" FROM {Concept._meta.db_table} WHERE id = ANY(%s)",
                    [ids],
                )
                rows = cursor.fetchall()
        else:
            rows = Concept.objects.filter(pk__in=ids).values_list(*columns)
        out = {}
        for pk, name, status, merged_at, retired_at in rows:
            if self.at is None:
                active = status == Concept.Status.ACTIVE
            else:
                active = not (
                    (merged_at is not None and merged_at <= self.at)
                    or (retired_at is not None and retired_at <= self.at)
                )
            out[pk] = ConceptFact(concept_id=pk, name=name, active=active)
        self._known.update(out)
        self._absent.update(set(ids) - out.keys())

    # edges ---------------------------------------------------------------------------

    def _select(self) -> str:
        edge = Edge._meta.db_table
        revision = SourceRevision._meta.db_table
        source = Source._meta.db_table
        return (
            "SELECT e.id, e.source_id, e.target_id, e.relation_id, e.is_symmetric,"
            " e.evidence_quote, s.slug, r.number"
            f" FROM {edge} e LEFT JOIN {revision} r ON r.id = e.evidence_revision_id"
            f" LEFT JOIN {source} s ON s.id = r.source_id"
        )

    def _facts(self, rows) -> tuple[EdgeFact, ...]:
        """The rows as edges with their evidence, each kept for later reads of this
        reader (a study order cites edges the walk has read already)."""
        facts = tuple(
            EdgeFact(
                edge_id=int(pk),
                source_id=int(src),
                target_id=int(dst),
                relation=self._key_of.get(int(rel), ""),
                symmetric=bool(sym),
                quote=quote or "",
                source_slug=slug or "",
                revision=int(number) if number is not None else None,
            )
            for pk, src, dst, rel, sym, quote, slug, number in rows
        )
        self._edge_known.update((f.edge_id, f) for f in facts)
        return facts

    def edge_facts(self, edge_ids: Iterable[int]) -> dict[int, EdgeFact]:
        """These edges with their evidence, whatever their status (one query)."""
        ids = sorted({int(i) for i in edge_ids})
        if not ids:
            return {}
        with connection.cursor() as cursor:
            where, params = _one_of("e.id", ids)
            cursor.execute(f"{self._select()} WHERE {where}", params)
            return {f.edge_id: f for f in self._facts(cursor.fetchall())}

    def _ways(self, groups: traversal.Groups) -> tuple[set, set]:
        """The relation keys walked out (source to target) and in, for ``groups``."""
        out_keys = {self._key_of[r] for d, ids, _ in groups if d in ("out", "both") for r in ids}
        in_keys = {self._key_of[r] for d, ids, _ in groups if d in ("in", "both") for r in ids}
        return out_keys, in_keys

    def _stepping(
        self, nodes: Sequence[int], groups: traversal.Groups, cap: int
    ) -> tuple[tuple[EdgeFact, ...], bool]:
        """One query: the edges (ascending id) that step from ``nodes`` along ``groups``,
        at most ``cap``, and whether there were more."""
        out_ids = [r for d, ids, _ in groups if d in ("out", "both") for r in ids]
        in_ids = [r for d, ids, _ in groups if d in ("in", "both") for r in ids]
        if connection.vendor == "postgresql":
            sql, params = self._stepping_pg(nodes, out_ids, in_ids)
        else:
            sql, params = self._stepping_in(nodes, out_ids, in_ids)
        sql = f"{sql} ORDER BY e.id LIMIT %s"
        with connection.cursor() as cursor:
            cursor.execute(sql, [*params, int(cap) + 1])
            rows = cursor.fetchall()
        return self._facts(rows[:cap]), len(rows) > cap

    def _stepping_in(self, nodes, out_ids, in_ids) -> tuple[str, list]:
        """The edges stepping from ``nodes``, as ``IN`` lists (SQLite)."""
        parts, params = [], []
        # Unary plus, as in traversal: the frontier's ends select the rows, never the
        # (relation, status) index and every edge of a type.
        for column, rel_ids in (("e.source_id", out_ids), ("e.target_id", in_ids)):
            if rel_ids:
                parts.append(
                    f"({column} IN ({_marks(nodes)}) AND +e.relation_id IN ({_marks(rel_ids)}))"
                )
                params += [*nodes, *rel_ids]
        cond, cond_params = traversal.edge_condition("e", self.at)
        return f"{self._select()} WHERE {cond} AND ({' OR '.join(parts)})", cond_params + params

    def _stepping_pg(self, nodes, out_ids, in_ids) -> tuple[str, list]:
        """The edges stepping from ``nodes`` on PostgreSQL: the nodes joined as one array
        parameter (thousands of placeholders cost more to build and parse than to run,
        and a long ``ANY`` is rechecked element by element for every row)."""
        parts, params = [], []
        for column, rel_ids in (("source_id", out_ids), ("target_id", in_ids)):
            if rel_ids:
                cond, cond_params = traversal.edge_condition("x", self.at)
                parts.append(
                    "SELECT x.id FROM unnest(CAST(%s AS BIGINT[])) AS f(node)"
                    f" JOIN {Edge._meta.db_table} x ON x.{column} = f.node"
                    f" WHERE {cond} AND +x.relation_id = ANY(%s)"
                )
                params += [list(nodes), *cond_params, list(rel_ids)]
        return f"{self._select()} WHERE e.id IN ({' UNION ALL '.join(parts)})", params

    def _closure(self, start: Sequence[int], groups: traversal.Groups, limit: int) -> list[int]:
        """Up to ``limit`` concepts reachable from ``start`` along ``groups`` (``start``
        included), each once, in one recursive query."""
        join, reach, params = traversal.step_groups(groups, self.at, node="r.node")
        seed, seed_params = _seed_rows(start)
        sql = (
            f"WITH RECURSIVE r(node) AS ({seed} UNION SELECT {reach} FROM r"
            f" JOIN {Edge._meta.db_table} e ON {join}) SELECT node FROM r LIMIT %s"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [*seed_params, *params, int(limit)])
            return [int(n) for (n,) in cursor.fetchall()]

    def _prefetch(
        self, reach: _Reach, start: Sequence[int], groups: traversal.Groups, limit: int
    ) -> None:
        """Read, in two queries, every edge stepping from the concepts the walk can still
        reach from ``start`` (at most ``limit`` of them), so its next hops are answered
        from memory. Nothing is kept if a hub makes the edges more than ``cap``."""
        nodes = self._closure(start, groups, limit)
        facts, more = self._stepping(nodes, groups, cap=PREFETCH_EDGES * max(limit, 1))
        if not more:
            reach.keep(facts, nodes, self._ways(groups))
            self.concepts(nodes)  # the walk will ask for their names hop by hop

    def expand(
        self, frontier: Sequence[int], *, walks: Sequence[Walk], limit: int
    ) -> tuple[tuple[EdgeFact, ...], bool]:
        """One hop from the frontier along the walks: the edges (ascending id) and
        whether there were more than ``limit``.

        The first hop of a walk is one query. When the same walks are expanded again (a
        transitive walk going on), the rest of their reach is read at once (``_prefetch``)
        and later hops come from memory; walks that go both ways (a connection's) are
        never prefetched, since their reach is most of the graph.
        """
        nodes = sorted({int(n) for n in frontier})
        groups = self._groups(walks)
        if not nodes or not groups or limit <= 0:
            return (), False
        reach = self._reach.setdefault(groups, _Reach())
        reach.hops += 1
        missing = [n for n in nodes if n not in reach.done]
        if missing and reach.hops > 1 and all(d != "both" for d, _, _ in groups):
            self._prefetch(reach, missing, groups, limit)
            missing = [n for n in nodes if n not in reach.done]
        if missing:
            facts, more = self._stepping(nodes, groups, cap=limit)
            if not more:
                reach.keep(facts, nodes, self._ways(groups))
            return facts, more
        found = {f.edge_id: f for n in nodes for f in reach.steps.get(n, ())}
        facts = tuple(found[k] for k in sorted(found))
        return facts[:limit], len(facts) > limit

    def path(
        self, start_id: int, goal_id: int, *, walks: Sequence[Walk], max_depth: int
    ) -> tuple[EdgeFact, ...] | None:
        groups = self._groups(walks)
        if not groups:
            return None if start_id != goal_id else ()
        hops = traversal.shortest_path(
            start_id=start_id,
            goal_id=goal_id,
            groups=groups,
            at=self.at,
            max_depth=max(1, min(int(max_depth), traversal.MAX_DEPTH)),
        )
        if hops is None:
            return None
        facts = self.edge_facts(h.edge_id for h in hops)
        return tuple(facts[h.edge_id] for h in hops)

    # study order ---------------------------------------------------------------------

    def _study_from_memory(
        self, target_id: int, limit: int
    ) -> tuple[list[learning.StudyEdge], bool] | None:
        """The ordering edges of the target's closure from what the walks already read
        (a prerequisites question has just walked it), or None when they did not."""
        reach = self._reach.get(self._groups(STUDY_WALKS))
        if reach is None or target_id not in reach.done:
            return None
        rel_ids = {key: row.id for key, row in self._by_key.items()}
        edges, seen, cut = [], {target_id}, False
        queue = deque([target_id])
        while queue:
            node = queue.popleft()
            if node not in reach.done:
                cut = True
                continue
            for fact in reach.steps.get(node, ()):
                before = fact.source_id if fact.target_id == node else fact.target_id
                edges.append(learning.StudyEdge(before, node, fact.edge_id, rel_ids[fact.relation]))
                if before not in seen:
                    if len(seen) >= limit:
                        cut = True
                        continue
                    seen.add(before)
                    queue.append(before)
        return edges, cut

    def study_order(self, target_id: int, *, limit: int) -> tuple[Retrieval, bool]:
        """Everything the target needs in a valid study order: from the edges the walk
        already read when it has (no query but for names), else ``traversal``'s
        learning path (one recursive query, names and evidence)."""
        orders: dict[int, str] = {
            self._by_key[key].id: how
            for key, how in learning.STUDY_ORDER.items()
            if key in self._by_key
        }
        facts: dict[int, ConceptFact] = {}

        def names(ids: set[int]) -> dict[int, str]:
            facts.update(self.concepts(ids))
            return {k: v.name for k, v in facts.items()}

        result = learning.learning_path(
            target_id=target_id,
            relations=orders,
            at=self.at,
            name_lookup=names,
            limit=limit,
            study=self._study_from_memory(target_id, limit),
        )
        needs: dict[int, list[int]] = defaultdict(list)
        edge_ids = []
        for after, study in result.needs.items():
            for e in study:
                needs[after].append(e.before_id)
                edge_ids.append(e.edge_id)
        for e in result.cycle:
            needs[e.after_id].append(e.before_id)
            edge_ids.append(e.edge_id)
        distance = _distances(target_id, needs)
        edges = {i: self._edge_known[i] for i in edge_ids if i in self._edge_known}
        missing = set(edge_ids) - edges.keys()
        if missing:  # only what the walk has not read
            edges.update(self.edge_facts(missing))
        retrieval = Retrieval(
            edges=tuple(edges[i] for i in sorted(edges)),
            concepts=tuple(facts[i] for i in sorted(facts)),
            from_start=tuple(sorted(distance.items())),
            depth=max(distance.values(), default=0),
            exhausted=not result.truncated,
            truncated=result.truncated,
            # Foundations first; the target itself is the question, not the answer.
            order=tuple(c for c in result.order if c != target_id),
        )
        return retrieval, result.truncated


def _distances(start: int, needs: dict[int, list[int]]) -> dict[int, int]:
    """Steps from ``start`` to each concept it needs, breadth first."""
    distance = {start: 0}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for before in needs.get(node, ()):
            if before not in distance:
                distance[before] = distance[node] + 1
                queue.append(before)
    return distance


# --- The service ------------------------------------------------------------------------


def question_max() -> int:
    return int(settings.KG_ASK_QUESTION_MAX)


def clean_question(question: str) -> str:
    """The question as the loop reads it: no control characters, one space between
    words. Refused in words when empty or longer than ``KG_ASK_QUESTION_MAX``."""
    text = normal_name(without_controls(str(question or "")))
    if not text:
        raise ValidationFailed(
            "Ask a question: the question is empty. For example: “How is X connected to Y?”, "
            "with the names of two concepts of the graph."
        )
    most = question_max()
    if len(text) > most:
        raise ValidationFailed(
            f"The question is {len(text)} characters long; ask it in at most {most} characters."
        )
    return text


def planner_and_critic(provider: str):
    """The planner and critic for ``provider``: offline rules, or a model through the
    OpenAI-compatible client configured by the ``KG_LLM_*`` settings."""
    from construction.ask.critic import OfflineCritic

    if provider == "offline":
        from construction.ask.planner_offline import OfflinePlanner

        return OfflinePlanner(), OfflineCritic()
    if provider == "openai":
        from construction.ask.llm import OpenAICritic, OpenAIPlanner

        client = client_settings()
        return OpenAIPlanner(**client), OpenAICritic(base=OfflineCritic(), **client)
    raise ValidationFailed(
        f"There is no planner called “{str(provider)[:40]}”: use {' or '.join(PROVIDERS)}."
    )


def type_specs() -> list[TypeSpec]:
    """The concept vocabulary as the ask loop reads it (retired types too: a concept may
    have had one at a past instant). One query."""
    rows = ConceptType.objects.values_list("key", "label", "parent__key").order_by("key")
    return [TypeSpec(key, label, parent) for key, label, parent in rows]


def instant_words(at: datetime | None) -> str | None:
    """The instant as the answer echoes it: ISO 8601 in UTC, to the second."""
    if at is None:
        return None
    return at.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def ask_graph(question: str, *, at: datetime | None = None, provider: str | None = None) -> Answer:
    """Answer ``question`` from the graph as it stands (or stood at ``at``, an aware
    datetime): a concept set, a cited path or a yes/no, with the plan and the critique.
    ``provider`` None means ``KG_ASK_PROVIDER``.

    Raises ``ValidationFailed`` (words) for an empty or over-long question or an unknown
    provider. Reads only. Same question, graph and instant give the same answer.
    """
    from construction.ask.loop import ask
    from construction.errors import LLMError

    text = clean_question(question)
    provider = provider or settings.KG_ASK_PROVIDER
    planner, critic = planner_and_critic(provider)
    index = QUESTION_INDEX.get()
    reader = DbGraphReader(at)
    try:
        answer, _usage = ask(
            text,
            reader=reader,
            index=index,
            planner=planner,
            critic=critic,
            max_iterations=settings.KG_ASK_MAX_ITERATIONS,
            limit=settings.KG_ASK_CONCEPT_LIMIT,
            set_limit=settings.KG_ASK_SET_LIMIT,
            at=instant_words(at),
            max_tokens=settings.KG_ASK_MAX_TOKENS,
            types=type_specs(),
        )
    except LLMError as exc:
        raise ModelUnavailable(
            f"The {provider} planner could not answer ({exc}); nothing was answered. "
            "Ask again later, or with the offline planner."
        ) from None
    return answer
