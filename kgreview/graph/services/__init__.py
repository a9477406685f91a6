"""Every write to the graph. One transaction per call; callers never touch rows directly.

The services live in modules by subject: ``concepts`` (create, describe, rename,
aliases, retire, reactivate), ``merges`` (merge and unmerge), ``edges`` (add,
invalidate, supersede, restore; the row writing and checks they share with merges are
in ``rows``) and ``relations`` (the relation vocabulary). Importing a source's text is
``kgreview.graph.sources.source_import``, also named here. ``common`` holds what they
share, including how a change is attributed: every state-changing service takes
``acting_user`` (``None`` for the system's or an agent's own work) and ``decision``,
and writes one curation log row unless it is part of a decision on a proposal.

Locking rules: a service locks (``select_for_update``) the rows it changes before it
checks their state. Edges of an acyclic relation are serialised per relation by locking
its ``RelationType`` row, so two concurrent inserts cannot close a cycle between them.
Concepts are locked in id order so concurrent merges cannot deadlock.
"""

from ..sources import SourceImportResult, source_import, text_sha256
from .common import DECIDING, NAME_MAX, Evidence, inactive_words, name_index_changed
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
from .merges import MergeOutcome, UnmergeOutcome, concept_merge, concept_unmerge
from .relations import (
    relation_type_create,
    relation_type_describe,
    relation_type_reactivate,
    relation_type_retire,
)
from .rows import edge_row, ensure_new_fact

__all__ = [
    "DECIDING",
    "NAME_MAX",
    "Evidence",
    "MergeOutcome",
    "SourceImportResult",
    "UnmergeOutcome",
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
    "concept_unmerge",
    "edge_add",
    "edge_create",
    "edge_invalidate",
    "edge_restore",
    "edge_row",
    "edge_supersede",
    "ensure_new_fact",
    "inactive_words",
    "name_index_changed",
    "relation_type_create",
    "relation_type_describe",
    "relation_type_reactivate",
    "relation_type_retire",
    "source_import",
    "text_sha256",
]
