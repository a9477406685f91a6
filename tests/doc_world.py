"""A team's graph for the tests of "your own graph": the documentation vocabulary (no
prerequisite, no builds_on) and a few facts from a database manual, each quoting its
sentence.

    Autovacuum -uses-> Statistics collector;  VACUUM -uses-> Statistics collector;
    B-tree index -is_a-> Index;  Hash index -is_a-> Index;  Index -is_a-> Database object;
    CREATE SUBSCRIPTION -requires-> REPLICATION privilege;  wal_level -configures-> WAL;
    pg_dump -produces-> Archive file;  pg_dump -alternative_to- pg_basebackup;
    WAL writer -part_of-> Server.
"""

from __future__ import annotations

from kgreview.graph.vocabulary_files import load_preset
from kgreview.review.vocabulary import vocabulary_install
from tests import factories as f

FACTS = [
    ("Autovacuum", "uses", "Statistics collector", "Autovacuum uses the statistics collector."),
    ("VACUUM", "uses", "Statistics collector", "VACUUM uses the statistics collector too."),
    ("B-tree index", "is_a", "Index", "A B-tree index is a kind of index."),
    ("Hash index", "is_a", "Index", "A hash index is a kind of index."),
    ("Index", "is_a", "Database object", "An index is a database object."),
    (
        "CREATE SUBSCRIPTION",
        "requires",
        "REPLICATION privilege",
        "CREATE SUBSCRIPTION requires the REPLICATION privilege.",
    ),
    ("wal_level", "configures", "WAL", "wal_level configures how much is written to the WAL."),
    ("pg_dump", "produces", "Archive file", "pg_dump produces an archive file."),
    ("pg_dump", "alternative_to", "pg_basebackup", "pg_basebackup is an alternative to pg_dump."),
    ("WAL writer", "part_of", "Server", "The WAL writer is part of the server."),
]


def build():
    """Install the documentation vocabulary, then the facts; returns the concepts by name."""
    vocabulary_install(vocabulary=load_preset("documentation"), acting_user=None)
    text = "# Routine maintenance\n\n" + "\n".join(q for *_, q in FACTS) + "\n"
    revision = f.source(slug="maintenance", text=text).current_revision
    names = sorted({n for s, _r, t, _q in FACTS for n in (s, t)})
    concepts = {n: f.concept(n) for n in names}
    for src, rel, dst, quote in FACTS:
        f.edge(concepts[src], concepts[dst], rel, evidence=f.evidence(revision, quote))
    return concepts
