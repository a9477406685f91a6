"""The database seen through the construction loop's Protocols.

``construction/`` knows nothing of Django; this module builds what it needs (a concept
index, a graph view, the vocabulary, a source document) from the database. Everything
here reads; nothing writes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.conf import settings
from django.db import connection
from django.db.models import Q

from construction import keys
from construction.protocols import Extractor
from construction.quotes import quote_key
from construction.resolve import InMemoryConceptIndex
from construction.text import name_keys
from construction.types import (
    ActiveEvidence,
    IndexEntry,
    Link,
    Ontology,
    RelationSpec,
    SourceDoc,
)
from kgreview.core.llm import client_settings
from kgreview.graph.models import Concept, ConceptType, Edge, RelationPattern, SourceRevision
from kgreview.graph.name_index import ActiveNameCache, Touched, id_chunks
from kgreview.graph.selectors import RelationRow, relation_table
from kgreview.review.kinds.add_concept import AddConceptKind
from kgreview.review.kinds.add_edge import AddEdgeKind
from kgreview.review.models import OPEN_STATUSES, Proposal

# The kind of the proposals that add edges, written into the SQL below as a literal (it is
# a constant of the code), so PostgreSQL matches the queue's partial indexes on it.
EDGE_KIND = AddEdgeKind.key
# Part of every model reading's cache key: a new prompt never reuses an old answer.
PROMPT_VERSION = "p3"


def vocabulary(relations: list[RelationRow] | None = None) -> list[RelationSpec]:
    """The active vocabulary, the only relations the loop may propose."""
    rows = relation_table() if relations is None else relations
    return [row.spec for row in rows if row.active]


def ontology() -> Ontology:
    """The types and active relation patterns verify holds candidates to: one query when
    no relation has a pattern (verify then has nothing to check), four when one has
    (the types, the typed concepts, and the types open concept proposals propose)."""
    pairs: dict[str, list[tuple[str, str]]] = {}
    for relation, domain, range_ in RelationPattern.objects.filter(active=True).values_list(
        "relation__key", "domain__key", "range__key"
    ):
        pairs.setdefault(relation, []).append((domain, range_))
    if not pairs:
        return Ontology()
    return Ontology(
        parents=dict(ConceptType.objects.values_list("key", "parent__key")),
        patterns={key: tuple(found) for key, found in pairs.items()},
        concept_types=dict(
            Concept.objects.filter(type__isnull=False).values_list("pk", "type__key")
        ),
        proposal_types={
            pk: key
            for pk, key in Proposal.objects.filter(
                kind=AddConceptKind.key, status__in=OPEN_STATUSES
            )
            .exclude(payload__type_key="")
            .values_list("pk", "payload__type_key")
            if isinstance(key, str) and key
        },
    )


def source_doc(revision: SourceRevision) -> SourceDoc:
    return SourceDoc(
        slug=revision.source.slug,
        revision_id=revision.pk,
        revision_number=revision.number,
        title=revision.title or revision.source.title,
        text=revision.text,
    )


def active_evidence(revision: SourceRevision) -> list[ActiveEvidence]:
    """Active edges quoting an older revision of this revision's source."""
    if revision.number <= 1:
        return []
    rows = (
        Edge.objects.filter(
            status=Edge.Status.ACTIVE,
            evidence_revision__source_id=revision.source_id,
            evidence_revision__number__lt=revision.number,
        )
        .select_related("source", "target", "relation", "evidence_revision")
        .order_by("pk")
    )
    return [
        ActiveEvidence(
            edge_id=e.pk,
            quote=e.evidence_quote,
            revision_number=e.evidence_revision.number,
            description=f'"{e.source.name}" {e.relation.verb} "{e.target.name}"',
        )
        for e in rows
    ]


# --- Extractors -------------------------------------------------------------------------


def extractor_for(provider: str | None = None) -> Extractor:
    """The extractor a run uses, and the key under which its output is cached."""
    provider = provider or settings.KG_LLM_PROVIDER
    if provider == "offline":
        from construction.linguistic import LinguisticExtractor

        extractor: Extractor = LinguisticExtractor()
    elif provider == "rules":
        from construction.offline import OfflineExtractor

        extractor = OfflineExtractor()
    elif provider == "openai":
        from construction.llm import OpenAIExtractor

        extractor = OpenAIExtractor(**client_settings())
    else:
        raise ValueError(f"unknown provider {provider!r}: use offline, rules or openai")
    return extractor


def extractor_key(extractor: Extractor) -> str:
    version = PROMPT_VERSION if extractor.name == "openai" else "rules"
    return f"{extractor.name}:{extractor.model}:{version}"[:200]


# --- Concept index ----------------------------------------------------------------------


def _proposal_entries(rows) -> list[tuple[IndexEntry, list[str]]]:
    out = []
    for pk, payload in rows:
        canonical = payload.get("name", "")
        entry = IndexEntry(
            name=canonical,
            canonical=canonical,
            key=keys.new_concept_key(canonical),
            proposal_id=pk,
            is_canonical=False,
        )
        names = [canonical, *(payload.get("aliases") or [])]
        found = []
        for item in names:
            found += [key for key in name_keys(item) if key not in found]
        out.append((entry, found))
    return out


class IndexCache(ActiveNameCache):
    """One concept index per process for the construction loop: the active concepts'
    names (``graph.name_index``) and the open add_concept proposals, kept in step with
    the name journal: a decision, a new alias or a queued concept proposal costs the
    worker a re-read of that one endpoint's names, never a rebuild.
    """

    def _build(self) -> InMemoryConceptIndex:
        index = super()._build()
        self._add_proposals(index, None)
        return index

    def _discard(self, index: InMemoryConceptIndex, touched: Touched) -> None:
        # Proposals first: a concept re-added afterwards is not handed a key a proposal
        # held only because it was registered first.
        for proposal_id in touched.proposals:
            index.discard(proposal_id=proposal_id)
        super()._discard(index, touched)

    def _add(self, index: InMemoryConceptIndex, touched: Touched) -> None:
        super()._add(index, touched)
        if touched.proposals:
            self._add_proposals(index, touched.proposals)

    @staticmethod
    def _add_proposals(index: InMemoryConceptIndex, ids: set[int] | None) -> None:
        """The open add_concept proposals (of ``ids`` only, when given), in id order."""
        base = Proposal.objects.filter(kind=AddConceptKind.key, status__in=OPEN_STATUSES).order_by(
            "id"
        )
        batches: list[Iterable] = (
            [base.values_list("id", "payload").iterator(chunk_size=5000)]
            if ids is None
            else [base.filter(id__in=c).values_list("id", "payload") for c in id_chunks(ids)]
        )
        for rows in batches:
            for entry, found in _proposal_entries(rows):
                index.add(entry, keys=found)


INDEX_CACHE = IndexCache()


# --- Graph view -------------------------------------------------------------------------


def _concept_ids(node_keys: Sequence[str]) -> list[int]:
    return [cid for cid in (keys.concept_id_of(k) for k in node_keys) if cid is not None]


class DbGraphView:
    """Active edges and open add_edge proposals, as the loop's ``GraphView``.

    ``prepare`` loads every edge and open proposal touching the named endpoints, and the
    open and rejected proposals with the named dedup keys, in four queries; questions
    about prepared keys are then answered from memory. A cycle search walking beyond them
    costs one query a step (edges and proposals together), remembered for the rest of
    the source, so the next candidate's walk over the same concepts costs none.
    """

    def __init__(self, relations: list[RelationRow] | None = None) -> None:
        rows = relation_table() if relations is None else relations
        self._relations = {row.spec.key: row.id for row in rows}
        self._relation_keys = {v: k for k, v in self._relations.items()}
        self._nodes: set[str] = set()
        self._links: list[Link] = []
        # What a walk beyond the prepared nodes found, per (relation, direction) and node.
        self._walked: dict[tuple[str, bool], dict[str, list[Link]]] = {}
        self._dedups: set[str] = set()
        self._open: dict[str, int] = {}
        self._rejected: dict[str, set[str]] = {}

    def _edge_links(self, rows) -> list[Link]:
        return [
            Link("edge", pk, keys.concept_key(s), self._relation_keys[r], keys.concept_key(t))
            for pk, s, r, t in rows
        ]

    @staticmethod
    def _proposal_links(rows) -> list[Link]:
        return [Link("proposal", pk, s, r, t) for pk, s, r, t in rows]

    def prepare(self, *, node_keys, dedup_keys) -> None:
        nodes = sorted(set(node_keys) - self._nodes)
        if nodes:
            ids = _concept_ids(nodes) or [0]
            edge = Edge._meta.db_table
            proposal = Proposal._meta.db_table
            marks = ", ".join(["%s"] * len(ids))
            key_marks = ", ".join(["%s"] * len(nodes))
            # One round trip for both kinds of link; each side uses its own indexes.
            sql = f"""
                SELECT 'edge', id, CAST(source_id AS TEXT), CAST(relation_id AS TEXT),
                       CAST(target_id AS TEXT)
                FROM {edge} WHERE status = 'active'
                  AND (source_id IN ({marks}) OR target_id IN ({marks}))
                UNION ALL
                SELECT 'proposal', id, source_key, relation_key, target_key
                FROM {proposal} WHERE kind = '{EDGE_KIND}' AND status IN ('pending', 'held')
                  AND (source_key IN ({key_marks}) OR target_key IN ({key_marks}))
            """
            with connection.cursor() as cursor:
                cursor.execute(sql, [*ids, *ids, *nodes, *nodes])
                rows = cursor.fetchall()
            for kind, pk, src, rel, dst in rows:
                if kind == "edge":
                    link = Link(
                        "edge",
                        pk,
                        keys.concept_key(int(src)),
                        self._relation_keys[int(rel)],
                        keys.concept_key(int(dst)),
                    )
                else:
                    link = Link("proposal", pk, src, rel, dst)
                self._links.append(link)
            self._links = list(dict.fromkeys(self._links))
            self._nodes |= set(nodes)
        dedups = set(dedup_keys) - self._dedups
        if dedups:
            for pk, key, status, quote in Proposal.objects.filter(
                dedup_key__in=dedups, status__in=(*OPEN_STATUSES, Proposal.Status.REJECTED)
            ).values_list("pk", "dedup_key", "status", "evidence_quote"):
                if status == Proposal.Status.REJECTED:
                    if quote:
                        self._rejected.setdefault(key, set()).add(quote_key(quote))
                else:
                    self._open[key] = pk
            self._dedups |= dedups

    def successors(self, relation: str, node_keys: Sequence[str]) -> list[Link]:
        return self._neighbours(relation, node_keys, outgoing=True)

    def predecessors(self, relation: str, node_keys: Sequence[str]) -> list[Link]:
        return self._neighbours(relation, node_keys, outgoing=False)

    def _neighbours(self, relation: str, node_keys: Sequence[str], *, outgoing: bool):
        near = "source_key" if outgoing else "target_key"
        known = {k for k in node_keys if k in self._nodes}
        links = [x for x in self._links if x.relation == relation and getattr(x, near) in known]
        unknown = [k for k in node_keys if k not in self._nodes]
        if not unknown:
            return links
        walked = self._walked.setdefault((relation, outgoing), {})
        fetch = [k for k in dict.fromkeys(unknown) if k not in walked]
        if fetch:
            for k in fetch:
                walked[k] = []
            for link in self._fetch_neighbours(relation, fetch, outgoing=outgoing):
                walked.setdefault(getattr(link, near), []).append(link)
        for k in unknown:
            links += walked.get(k, [])
        return links

    def _fetch_neighbours(self, relation: str, node_keys: list[str], *, outgoing: bool):
        """Active edges and open add_edge proposals of ``relation`` leaving (or entering)
        the nodes, in one round trip: a cycle search widens a frontier per step."""
        rel_id = self._relations.get(relation)
        ids = _concept_ids(node_keys)
        edge, proposal = Edge._meta.db_table, Proposal._meta.db_table
        end_id, end_key = ("source_id", "source_key") if outgoing else ("target_id", "target_key")
        key_marks = ", ".join(["%s"] * len(node_keys))
        parts: list[str] = []
        params: list[int | str] = []
        if rel_id is not None and ids:
            parts.append(
                f"SELECT 'edge', id, CAST(source_id AS TEXT), CAST(relation_id AS TEXT),"
                f" CAST(target_id AS TEXT) FROM {edge} WHERE status = 'active'"
                f" AND relation_id = %s AND {end_id} IN ({', '.join(['%s'] * len(ids))})"
            )
            params += [rel_id, *ids]
        parts.append(
            f"SELECT 'proposal', id, source_key, relation_key, target_key FROM {proposal}"
            f" WHERE kind = '{EDGE_KIND}' AND status IN ('pending', 'held') AND relation_key = %s"
            f" AND {end_key} IN ({key_marks})"
        )
        params += [relation, *node_keys]
        with connection.cursor() as cursor:
            cursor.execute(" UNION ALL ".join(parts), params)
            rows = cursor.fetchall()
        out: list[Link] = []
        for kind, pk, src, rel, dst in rows:
            if kind == "edge":
                out.append(
                    Link(
                        "edge",
                        pk,
                        keys.concept_key(int(src)),
                        self._relation_keys[int(rel)],
                        keys.concept_key(int(dst)),
                    )
                )
            else:
                out.append(Link("proposal", pk, src, rel, dst))
        return out

    def between(self, a: str, b: str) -> list[Link]:
        if a in self._nodes or b in self._nodes:
            return [x for x in self._links if {x.source_key, x.target_key} == {a, b}]
        links: list[Link] = []
        ids = _concept_ids([a, b])
        if len(ids) == 2:
            rows = Edge.objects.filter(
                Q(source_id=ids[0], target_id=ids[1]) | Q(source_id=ids[1], target_id=ids[0]),
                status=Edge.Status.ACTIVE,
            ).values_list("pk", "source_id", "relation_id", "target_id")
            links += self._edge_links(rows)
        rows = Proposal.objects.filter(
            Q(source_key=a, target_key=b) | Q(source_key=b, target_key=a),
            kind=AddEdgeKind.key,
            status__in=OPEN_STATUSES,
        ).values_list("pk", "source_key", "relation_key", "target_key")
        links += self._proposal_links(rows)
        return links

    def open_proposal(self, dedup_key: str) -> int | None:
        if dedup_key in self._dedups:
            return self._open.get(dedup_key)
        return (
            Proposal.objects.filter(dedup_key=dedup_key, status__in=OPEN_STATUSES)
            .values_list("pk", flat=True)
            .first()
        )

    def rejected_quotes(self, dedup_key: str) -> set[str]:
        if dedup_key in self._dedups:
            return self._rejected.get(dedup_key, set())
        quotes = Proposal.objects.filter(
            dedup_key=dedup_key, status=Proposal.Status.REJECTED
        ).values_list("evidence_quote", flat=True)
        return {quote_key(q) for q in quotes if q}
