"""The graph's rule book for an edge: every rule a new edge must pass, and its words.

Each rule is a pure function over rows the caller already loaded: it returns ``None``
when the fact passes, else the refusal as a ``DomainError`` instance, which a service
raises and a set-based writer records against its row. The single services
(``services.rows.check_edge``, ``services.common.Evidence``, ``services.edges``), the
set-based writes (``graph.bulk.edges_add_checked``, ``graph.bulk_admit``), the review
card's blockers and the bulk preview all take their refusals from here, so a rule and
its sentence are written once and hold on every path.

The rules, in the order ``edge_refusal`` applies them: the relation exists and is
active; both ends exist and are active concepts (not retired, not merged); the edge is
no self-loop; confidence lies between 0 and 1 and weight is not negative; the edge
gives a reason; its evidence lies inside its revision and quotes it verbatim. Then, for
the graph as it is: the fact is not held already (a symmetric relation holds it both
ways round, ``fact_keys``), and in an acyclic relation it closes no cycle
(``cycle_refusal``, ``unchecked_refusal``: the searches are ``graph.order``'s).

At the end, the concept vocabulary's rules: a type's key and words, its parent (existing,
active, closing no loop), and which type a concept may be given; then the relation
patterns' (``pattern_refusal``: which types an edge of a patterned relation may join, on
every path that writes an edge or changes what one joins, and a pattern's own rules).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

from construction import keys
from construction.text import CONTROL
from kgreview.core.errors import (
    ConceptNotActive,
    CycleDetected,
    CycleUnchecked,
    DomainError,
    DuplicateEdge,
    EvidenceMismatch,
    InactiveRelation,
    InactiveType,
    NameTaken,
    PatternViolation,
    SelfLoop,
    StateConflict,
    ValidationFailed,
)

from .models import Concept, ConceptType, Edge, RelationType, SourceRevision

if TYPE_CHECKING:
    from .ontology import RelationPattern

# An end of a fact: a concept id, or whatever stands for a concept still to be made.
End = TypeVar("End", bound=Hashable)

# --- The vocabulary ---------------------------------------------------------------------


def no_relation(key: str) -> ValidationFailed:
    """The refusal of an edge whose relation does not exist."""
    return ValidationFailed(f'The relation "{key}" does not exist.')


def relation_refusal(relation: RelationType) -> InactiveRelation | None:
    """An edge's relation must be active."""
    if relation.active:
        return None
    return InactiveRelation(
        f'The relation "{relation.key}" was retired; choose an active relation.'
    )


def inverse_refusal(relation: RelationType, other: RelationType | None) -> DomainError | None:
    """Whether ``other`` may be declared the inverse of ``relation`` (``None``: declaring
    none, always allowed). An inverse pair is two different directed relations, both
    active, both acyclic or neither (one fact cannot be kept out of cycles one way round
    and not the other), and neither paired with a third (``other.inverse`` is read: the
    caller selects it). A symmetric relation is its own inverse and names no other."""
    if other is None or other.pk == relation.inverse_id:
        return None
    if other.pk == relation.pk:
        return ValidationFailed(
            f'"{relation.key}" cannot be its own inverse: a relation that reads the same '
            "both ways is a symmetric one."
        )
    for row in (relation, other):
        if row.symmetric:
            return ValidationFailed(
                f'"{row.key}" is symmetric, so it is its own inverse: only two directed '
                "relations make an inverse pair."
            )
        if not row.active:
            return InactiveRelation(
                f'The relation "{row.key}" was retired, so it cannot be made an inverse; '
                "reactivate it first."
            )
    if relation.acyclic != other.acyclic:
        cyclic, acyclic = (other, relation) if relation.acyclic else (relation, other)
        return ValidationFailed(
            f'"{acyclic.key}" is acyclic and "{cyclic.key}" is not: an inverse pair states '
            "one fact both ways round, so both keep out cycles or neither does."
        )
    if other.inverse is not None:
        return StateConflict(
            f'"{other.key}" is already the inverse of "{other.inverse.key}"; '
            "declare it no inverse there first."
        )
    return None


def inverse_key(relation: RelationType) -> str:
    """The key of the relation stating ``relation``'s facts with the ends swapped: its
    declared inverse's, its own for a symmetric relation, "" for none (``inverse`` read:
    the caller selects it)."""
    if relation.symmetric:
        return relation.key
    return relation.inverse.key if relation.inverse is not None else ""


# --- The ends ---------------------------------------------------------------------------


def no_concept(concept_id: int) -> ValidationFailed:
    """The refusal of an edge whose end is no concept at all."""
    return ValidationFailed(f"There is no concept #{concept_id}.")


def inactive_words(concept: Concept) -> str:
    """Why a concept that is not active cannot be used, naming the concept a merge left
    its names on (the end of a chain of merges)."""
    if concept.status == Concept.Status.MERGED and concept.merged_into_id:
        from .selectors import survivor_of

        survivor = survivor_of(concept)
        return (
            f'"{concept.name}" was merged into "{survivor.name if survivor else "?"}"; '
            "use the surviving concept."
        )
    if concept.status == Concept.Status.RETIRED:
        return (
            f'"{concept.name}" was retired; a curator can reactivate it from its page, '
            "or choose another concept."
        )
    return f'"{concept.name}" is {concept.status}, not active.'


def end_refusal(concept: Concept | None, concept_id: int | None = None) -> DomainError | None:
    """An edge's end must be an active concept (``None``: the concept ``concept_id``,
    which was looked for and not found)."""
    if concept is None:
        return no_concept(concept_id or 0)
    if concept.is_active:
        return None
    return ConceptNotActive(inactive_words(concept), concept_id=concept.pk)


def self_loop(source: Concept, target: Concept) -> SelfLoop | None:
    """An edge joins two different concepts."""
    if source.pk != target.pk:
        return None
    return self_loop_named(source.name)


def self_loop_named(name: str) -> SelfLoop:
    """The refusal of an edge whose two ends are the one concept ``name`` (also said of a
    proposal or a hand-made edge whose ends name it twice, before any concept is read)."""
    return SelfLoop(f'An edge cannot join "{name}" to itself.')


def ends_meet(name: str = "") -> SelfLoop:
    """The refusal of a proposed edge whose two ends now stand for one concept (named
    when the caller knows it)."""
    if name:
        return SelfLoop(f'Both ends are now the concept "{name}"; an edge cannot loop.')
    return SelfLoop("Both ends are now the same concept; an edge cannot loop.")


# --- Its numbers, reason and evidence ----------------------------------------------------


def confidence_refusal(confidence: float) -> ValidationFailed | None:
    if 0.0 <= confidence <= 1.0:
        return None
    return ValidationFailed(f"Confidence must lie between 0 and 1, not {confidence}.")


def weight_refusal(weight: float) -> ValidationFailed | None:
    if weight >= 0:
        return None
    return ValidationFailed(f"Weight cannot be negative ({weight}).")


def reason_refusal(reason: str) -> ValidationFailed | None:
    if reason.strip():
        return None
    return ValidationFailed("Every edge needs a reason: say why it exists.")


def evidence_refusal(
    revision: SourceRevision, start: int, end: int, quote: str
) -> EvidenceMismatch | None:
    """Evidence is a verbatim quote of its revision: the offsets lie inside the text, and
    the text there is the quote (``revision.source`` is read for the words)."""
    text = revision.text
    if not 0 <= start < end <= len(text):
        return EvidenceMismatch(
            f"Evidence offsets {start}..{end} fall outside revision "
            f"{revision.number} of {revision.source.slug} ({len(text)} characters)."
        )
    if text[start:end] != quote:
        return EvidenceMismatch(
            f"The quoted evidence does not match revision {revision.number} of "
            f"{revision.source.slug} at {start}..{end}."
        )
    return None


def edge_refusal(
    *,
    source: Concept,
    target: Concept,
    relation: RelationType,
    confidence: float,
    weight: float,
    reason: str,
    evidence: tuple[SourceRevision, int, int, str] | None,
) -> DomainError | None:
    """The first rule a new edge breaks, before the graph is asked (duplicates, cycles):
    relation, ends, loop, numbers, reason, evidence (revision, start, end, quote)."""
    refusal: DomainError | None = relation_refusal(relation)
    for concept in (source, target):
        refusal = refusal or end_refusal(concept)
    refusal = (
        refusal
        or self_loop(source, target)
        or confidence_refusal(confidence)
        or weight_refusal(weight)
        or reason_refusal(reason)
    )
    if refusal is None and evidence is not None:
        refusal = evidence_refusal(*evidence)
    return refusal


def row_refusal(
    row: Edge, source: Concept, target: Concept, relation: RelationType | None = None
) -> DomainError | None:
    """``edge_refusal`` for an unsaved ``Edge`` row with its ends' concepts (and its
    relation as locked, when the caller read it again)."""
    return edge_refusal(
        source=source,
        target=target,
        relation=relation or row.relation,
        confidence=row.confidence,
        weight=row.weight,
        reason=row.reason,
        evidence=evidence_of(row),
    )


def evidence_of(row) -> tuple[SourceRevision, int, int, str] | None:
    """The evidence a row (an edge or a proposal) carries in its ``evidence_*`` columns,
    as the evidence rule reads it; offsets missing beside a revision read as outside."""
    if row.evidence_revision_id is None:
        return None
    start, end = row.evidence_start, row.evidence_end
    return (
        row.evidence_revision,
        -1 if start is None else start,
        -1 if end is None else end,
        row.evidence_quote,
    )


# --- Against the graph as it is -----------------------------------------------------------


def fact_keys(
    source_id: End, relation: RelationType, target_id: End
) -> tuple[tuple[End, int, End], ...]:
    """The (source, relation, target) keys under which an edge holds its fact: its own,
    and its twin's with the ends swapped under the relation's inverse (a symmetric
    relation is its own inverse; a directed one names its pair, ``inverse_id``).
    The rule is ``construction.keys.fact_forms``, shared with the construction loop."""
    return keys.fact_forms(
        source_id,
        relation.pk,
        target_id,
        inverse=relation.inverse_id,
        symmetric=relation.symmetric,
    )


def same_fact(a: tuple[End, RelationType, End], b: tuple[End, int, End]) -> bool:
    """Whether ``b`` (source, relation id, target) states the fact ``a`` states."""
    return b in fact_keys(*a)


def duplicate_refusal(
    relation: RelationType,
    source_name: str,
    target_name: str,
    existing: int,
    *,
    held_relation_id: int | None = None,
) -> DuplicateEdge:
    """The refusal of an edge the graph already holds (``existing``), between the
    concepts named. When the edge holding it is the inverse twin (``held_relation_id``
    is the relation's inverse), the words name that edge's own fact."""
    inverse = relation.inverse if relation.inverse_id else None
    if held_relation_id is not None and held_relation_id != relation.pk and inverse is not None:
        twin = fact_words(inverse, target_name, source_name)
        return DuplicateEdge(
            f"{fact_words(relation, source_name, target_name)}: {twin} already states this "
            f"(edge #{existing}).",
            edge_id=existing,
        )
    return DuplicateEdge(
        f"{fact_words(relation, source_name, target_name)} is already in the graph "
        f"(edge #{existing}).",
        edge_id=existing,
    )


def fact_words(relation: RelationType, source_name: str, target_name: str) -> str:
    """An edge's fact in words: "A" is a prerequisite for "B"."""
    return f'"{source_name}" {relation.verb} "{target_name}"'


def cycle_refusal(
    relation: RelationType,
    source: Concept,
    target: Concept,
    chain: Sequence[tuple[int, str]] | None,
) -> CycleDetected:
    """The refusal of ``source -> target``, which closes a cycle: ``chain`` is the way back
    from the target to the source, (id, name) in order (None: the two ends alone)."""
    chain = list(chain or [(target.pk, target.name), (source.pk, source.name)])
    words = " → ".join(name for _, name in [*chain, chain[0]])
    return CycleDetected(
        f"{fact_words(relation, source.name, target.name)} would close a cycle: {words}.",
        path=[cid for cid, _ in chain],
    )


_UNORDERED = (
    " (its edges are not in order, as they held a cycle or were written past the "
    "services: `manage.py order_relations` orders them again)"
)


def unchecked_refusal(
    relation: RelationType, source: Concept, target: Concept, *, limit: int, ordered: bool
) -> CycleUnchecked:
    """The refusal of an edge whose bounded cycle search ran out (``limit`` concepts)."""
    return CycleUnchecked(
        f"{fact_words(relation, source.name, target.name)} could not be checked for a "
        f"cycle: more than {limit} concepts lead to and from its ends in "
        f'"{relation.key}"{"" if ordered else _UNORDERED}. Nothing was changed.'
    )


# --- The concept vocabulary ---------------------------------------------------------------
# A concept type's key, words and place in the hierarchy, and who may be given it. The
# services (``services.concept_types``) raise these; the add_concept_type card's blockers
# read them too.

# A key and the words of a word of the vocabulary (a concept type, an attribute): one rule,
# the thing named in its sentences ("a concept type", "an attribute").
VOCABULARY_KEY = re.compile(r"[a-z][a-z0-9_]{0,63}")
LABEL_MAX = 100
DESCRIPTION_MAX = 5000


def shown_key(key: str) -> str:
    """A key as a refusal may quote it: short and printable, else "this key"."""
    return key if len(key) <= 40 and not CONTROL.search(key) else "this key"


def key_refusal(key: str, *, thing: str, example: str) -> ValidationFailed | None:
    """The key of ``thing`` ("a concept type") is a short slug: a lowercase letter, then
    letters, digits or ``_``."""
    if VOCABULARY_KEY.fullmatch(key):
        return None
    return ValidationFailed(
        f'"{shown_key(key)}" cannot be {thing}\'s key: use a lowercase letter followed by up '
        f"to 63 lowercase letters, digits or underscores (such as {example})."
    )


def words_refusal(
    label: str, description: str, *, thing: str, says: str
) -> ValidationFailed | None:
    """The label of ``thing`` ("a concept type") holds words (100 characters at most) and
    neither it nor its description (5,000 at most) holds control characters; ``says`` is
    what its label says ("what it is")."""
    whose = f"{thing[:1].upper()}{thing[1:]}"
    if CONTROL.search(label) or CONTROL.search(description):
        return ValidationFailed(f"{whose}'s label and description cannot hold control characters.")
    if not label.strip():
        return ValidationFailed(f"{whose} needs a label: say in words {says}.")
    if len(label) > LABEL_MAX:
        return ValidationFailed(
            f"{whose}'s label is {LABEL_MAX} characters at most, not {len(label)}."
        )
    if len(description) > DESCRIPTION_MAX:
        return ValidationFailed(
            f"{whose}'s description is {DESCRIPTION_MAX:,} characters at most, "
            f"not {len(description):,}."
        )
    return None


def switch_refusal(row, *, active: bool, what: str) -> StateConflict | None:
    """Retiring a retired word of the vocabulary (a relation, a concept type, an
    attribute), or reactivating an active one, changes nothing; ``what`` names it at the
    head of the sentence ('The relation "part_of"')."""
    if row.active != active:
        return None
    return StateConflict(f"{what} is already {'active' if active else 'retired'}.")


def type_key_refusal(key: str) -> ValidationFailed | None:
    """A type's key is a short slug (``key_refusal``)."""
    return key_refusal(key, thing="a concept type", example="lock_mode")


def type_words_refusal(label: str, description: str) -> ValidationFailed | None:
    """A type's label holds words (``words_refusal``)."""
    return words_refusal(label, description, thing="a concept type", says="what it is")


def type_taken(key: str) -> NameTaken:
    """The refusal of a new type whose key another type (active or retired) holds."""
    return NameTaken(f'The concept type "{key}" already exists.')


def no_type(key: str) -> ValidationFailed:
    """The refusal of a type (a concept's, or a parent) that does not exist."""
    if len(key) > 64 or CONTROL.search(key):
        return ValidationFailed("There is no concept type by that key.")
    return ValidationFailed(f'There is no concept type "{key}".')


def type_active_refusal(
    concept_type: ConceptType, *, as_parent: bool = False
) -> DomainError | None:
    """A retired type is given to no concept and is no new parent."""
    if concept_type.active:
        return None
    role = "the parent of a type" if as_parent else "given to a concept"
    return _retired_type(concept_type, role)


def _retired_type(concept_type: ConceptType, role: str) -> InactiveType:
    return InactiveType(
        f'The concept type "{concept_type.key}" was retired and cannot be {role}; '
        "a curator can reactivate it on the Ontology page."
    )


def parent_cycle_refusal(key: str, ancestors: Sequence[str]) -> CycleDetected | None:
    """A type is never its own ancestor: ``ancestors`` are the keys of the proposed
    parent's chain, the parent first."""
    if key not in ancestors:
        return None
    chain = [key, *ancestors[: ancestors.index(key) + 1]]
    return CycleDetected(
        f'"{ancestors[0]}" cannot be the parent of "{key}": the hierarchy would loop '
        f"({' → '.join(chain)}).",
        path=list(chain),
    )


def type_retire_refusal(
    concept_type: ConceptType, active_children: Sequence[str]
) -> DomainError | None:
    """A type with active subtypes stays until they are retired or moved."""
    if not active_children:
        return None
    return StateConflict(
        f'The concept type "{concept_type.key}" still has active subtypes '
        f"({', '.join(active_children[:5])}); retire them or give them another parent first."
    )


def type_change_refusal(
    concept: Concept, old: ConceptType | None, new: ConceptType | None
) -> StateConflict | None:
    """A type change changes something."""
    if (old.pk if old else None) != (new.pk if new else None):
        return None
    if new is None:
        return StateConflict(f'"{concept.name}" has no type already.')
    return StateConflict(f'"{concept.name}" is a {new.label} already.')


# --- Relation patterns ---------------------------------------------------------------------
# Which concept types a relation may join. A relation with no active pattern is open; a
# patterned one takes an edge whose source's type is a pattern's domain (or below it) and
# whose target's type is its range (or below it), either way round for a symmetric
# relation. An untyped end fits no pattern. ``graph.pattern_book`` loads the patterns and
# the type tree once per batch; the services, the bulk writes, the card's blockers,
# mending and a concept's type change all ask this one rule.


def a_type(concept_type: ConceptType) -> str:
    """A type's label with its article: "a setting", "an index", "a SQL command"."""
    label = concept_type.label
    if len(label) > 1 and label[0].isupper() and not label[1].isupper():
        label = label[0].lower() + label[1:]
    return f"{'an' if label[:1].lower() in 'aeiou' else 'a'} {label}"


def pattern_words(relation: RelationType, patterns: Sequence[RelationPattern]) -> str:
    """What a relation's patterns allow, in words: "a setting to a process, or a file to
    a process" ("and" for a symmetric relation, which holds both ways round)."""
    join = " and " if relation.symmetric else " to "
    pairs = sorted({f"{a_type(p.domain)}{join}{a_type(p.range)}" for p in patterns})
    return ", or ".join(pairs)


def pattern_fits(
    domain_id: int, range_id: int, source_line: Collection[int], target_line: Collection[int]
) -> bool:
    """Whether an edge whose ends' types have the lines given (the type and every type
    above it) fits the pattern (domain, range): a subtype satisfies its parent."""
    return domain_id in source_line and range_id in target_line


def pattern_refusal(
    *,
    relation: RelationType,
    source_name: str,
    source_type: ConceptType | None,
    target_name: str,
    target_type: ConceptType | None,
    patterns: Sequence[RelationPattern],
    ancestors: Mapping[int, Collection[int]],
) -> PatternViolation | None:
    """An edge of a patterned relation joins types one of its active ``patterns``
    allows (their ``domain`` and ``range`` loaded); ``ancestors``: a type id -> that type
    and every type above it. No pattern: the relation is open and any ends fit. An
    untyped end fits no pattern, and the words say so."""
    if not patterns:
        return None
    source_line = ancestors.get(source_type.pk, ()) if source_type is not None else ()
    target_line = ancestors.get(target_type.pk, ()) if target_type is not None else ()
    for p in patterns:
        if pattern_fits(p.domain_id, p.range_id, source_line, target_line):
            return None
        if relation.symmetric and pattern_fits(p.domain_id, p.range_id, target_line, source_line):
            return None

    def what(name: str, concept_type: ConceptType | None) -> str:
        if concept_type is None:
            return f'"{name}" has no type'
        return f'"{name}" is {a_type(concept_type)}'

    untyped = source_type is None or target_type is None
    return PatternViolation(
        f'The relation "{relation.key}" joins {pattern_words(relation, patterns)}; '
        f"{what(source_name, source_type)} and {what(target_name, target_type)}"
        + (" (give it a type first)." if untyped else "."),
        relation=relation.key,
        patterns=[[p.domain.key, p.range.key] for p in patterns],
    )


def pattern_taken(relation: RelationType, domain: ConceptType, range_: ConceptType) -> NameTaken:
    """The refusal of a pattern the relation allows already (both ways round in a
    symmetric relation)."""
    join = " and " if relation.symmetric else " to "
    return NameTaken(
        f'The relation "{relation.key}" already allows {a_type(domain)}{join}{a_type(range_)}.'
    )


def pattern_type_refusal(concept_type: ConceptType) -> InactiveType | None:
    """A pattern names active types only."""
    if concept_type.active:
        return None
    return _retired_type(concept_type, "in a relation's pattern")


def pattern_state_refusal(pattern: RelationPattern, *, active: bool) -> StateConflict | None:
    """A pattern retired is retired once, and brought back once."""
    if pattern.active != active:
        return None
    state = "allowed" if active else "retired"
    return StateConflict(
        f'The pattern {a_type(pattern.domain)} → {a_type(pattern.range)} of "'
        f'{pattern.relation.key}" is already {state}.'
    )


def type_change_pattern_refusal(
    concept: Concept, new: ConceptType | None, broken: Sequence[PatternViolation]
) -> PatternViolation | None:
    """A concept's type does not change under its active edges: ``broken`` are the
    refusals its edges would meet with the new type (the first few are named)."""
    if not broken:
        return None
    given = f"the type {new.label}" if new is not None else "no type"
    shown = " ".join(str(b) for b in broken[:3])
    more = f" (and {len(broken) - 3} more)" if len(broken) > 3 else ""
    return PatternViolation(
        f'"{concept.name}" cannot be given {given}: {len(broken)} of its active edges '
        f"would break their relation's pattern{more}. {shown}",
        concept_id=concept.pk,
    )
