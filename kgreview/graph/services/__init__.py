"""Every write to the graph. One transaction per call; callers never touch rows directly.

The services live in modules by subject: ``concepts`` (create, describe, rename,
aliases, retire, reactivate), ``merges`` (merge and unmerge), ``edges`` (add,
invalidate, supersede, restore; the row writing and checks they share with merges are
in ``rows``), ``relations`` (the relation vocabulary), ``concept_types`` (the concept
vocabulary, and each concept's type with its history), ``patterns`` (which types
each relation may join) and ``attributes`` (the attributes types declare and the values
concepts hold). Importing a source's text is
``kgreview.graph.sources.source_import``, also named here. ``common`` holds what they
share, including how a change is attributed: every state-changing service takes
``acting_user`` (``None`` for the system's or an agent's own work) and ``decision``,
and writes one curation log row unless it is part of a decision on a proposal.

Locking rules. Every service locks (``select_for_update``) the rows it changes before it
checks their state, and every decision takes its locks in one order, so that two of them
never wait on each other crosswise (PostgreSQL would end one with "deadlock detected"):

1. proposals, in id order (``kgreview.review``: the proposal decided, with the concept
   proposals an edge needs and the proposals it contradicts, locked up front);
2. concepts, in id order: both ends of an edge, or both concepts of a merge, together;
3. relation types, in id order (only for an acyclic relation: its row serialises the
   edges of that relation, so two concurrent inserts cannot close a cycle between them,
   and its topological order, ``kgreview.graph.order``, has one writer at a time; an
   edge's concepts and relation are locked in one statement, ``rows.lock_for_edge``,
   the relation only once both concepts are held);
4. edges, in id order;
Then, last and taking no lock, the name journal's rows (``name_index_changed``): one per
concept or proposed concept whose names changed, written once at the end of a retried
decision (``kgreview.core.retry.once_before_commit``).

A service that must read a row before it knows what to lock (an edge's ends) reads it
unlocked, locks in order, then re-reads it locked. ``lock_graph`` takes steps 2 to 4 at
once for a decision that changes several things; a row locked twice in one transaction
waits only the first time. Locks are ``FOR NO KEY UPDATE``, which a foreign key check
(``FOR KEY SHARE``) does not wait for: inserting an edge never waits on its concepts
or its relation merely because another transaction locked them. Whatever deadlock is
left is retried whole at the outermost transaction (``kgreview.core.retry``).
"""

from ..rules import inactive_words
from ..sources import SourceImportResult, source_import, text_sha256
from .attributes import (
    attribute_create,
    attribute_reactivate,
    attribute_retire,
    attribute_value_restore,
    attribute_value_retire,
    attribute_value_set,
)
from .common import (
    DECIDING,
    NAME_MAX,
    Evidence,
    lock_concepts,
    lock_graph,
    name_index_changed,
)
from .concept_types import (
    concept_set_type,
    concept_type_create,
    concept_type_describe,
    concept_type_reactivate,
    concept_type_retire,
    type_change_pattern_refusal,
)
from .concepts import (
    check_retirable,
    concept_add_alias,
    concept_create,
    concept_describe,
    concept_reactivate,
    concept_remove_alias,
    concept_rename,
    concept_restore_alias,
    concept_retire,
)
from .edges import edge_add, edge_create, edge_invalidate, edge_restore, edge_supersede
from .guidelines import concept_type_guideline, relation_type_guideline
from .merges import MergeOutcome, UnmergeOutcome, concept_merge, concept_unmerge
from .patterns import pattern_create, pattern_reactivate, pattern_retire
from .relations import (
    inverse_named,
    relation_type_create,
    relation_type_describe,
    relation_type_pair,
    relation_type_reactivate,
    relation_type_retire,
)
from .rows import admit_fact, edge_row

__all__ = [
    "DECIDING",
    "NAME_MAX",
    "Evidence",
    "MergeOutcome",
    "SourceImportResult",
    "UnmergeOutcome",
    "admit_fact",
    "attribute_create",
    "attribute_reactivate",
    "attribute_retire",
    "attribute_value_restore",
    "attribute_value_retire",
    "attribute_value_set",
    "check_retirable",
    "concept_add_alias",
    "concept_create",
    "concept_describe",
    "concept_merge",
    "concept_reactivate",
    "concept_remove_alias",
    "concept_rename",
    "concept_restore_alias",
    "concept_retire",
    "concept_set_type",
    "concept_type_create",
    "concept_type_describe",
    "concept_type_guideline",
    "concept_type_reactivate",
    "concept_type_retire",
    "concept_unmerge",
    "edge_add",
    "edge_create",
    "edge_invalidate",
    "edge_restore",
    "edge_row",
    "edge_supersede",
    "inactive_words",
    "lock_concepts",
    "lock_graph",
    "name_index_changed",
    "pattern_create",
    "pattern_reactivate",
    "pattern_retire",
    "relation_type_create",
    "relation_type_describe",
    "relation_type_guideline",
    "inverse_named",
    "relation_type_pair",
    "relation_type_reactivate",
    "relation_type_retire",
    "source_import",
    "text_sha256",
    "type_change_pattern_refusal",
]
