"""What the Queue reads instead of scanning proposals: one row per flag a proposal carries
(``ProposalFlag``) and the queue's tally (``QueueTally``), both kept by the database.

Every write of a proposal (a service's ``save``, a queryset ``update`` in a bulk decision,
``bulk_create``, a benchmark's ``COPY``) passes the same triggers, installed on
PostgreSQL and SQLite alike, so neither structure can fall out of step with the rows it
describes, whoever writes them:

- **Flags.** An insert adds a ``ProposalFlag`` row per distinct flag in ``flags`` (the
  JSON list); a change of ``flags`` replaces them; a change of ``status``, ``priority``
  or ``confidence`` is copied onto them. A flag filter then reads its page off the flag
  rows' index in the Queue's order (``flag, status, -priority, -proposal`` and the like)
  instead of a ``LIKE`` over every proposal.
- **Tally.** Each insert adds ``+1`` under the proposal's (status, kind, relation_key,
  flags_text); each change of one of those adds ``-1`` under the old four and ``+1`` under
  the new. Rows are only ever appended by writers, so two decisions never wait on one
  hot counter row; ``compact`` folds them into one row per key when they pile up (the
  ``DELETE ... RETURNING`` takes exactly the rows it sums, so a concurrent writer's
  uncommitted row is never lost). The queue's facet counts for status, kind, relation
  and flags are sums over a few hundred rows, exact, and a decision changes them by its
  own rows: it never empties anything.

On PostgreSQL both triggers run once per statement, over the rows it inserted or changed
(transition tables): a bulk decision's one UPDATE of a thousand proposals writes a few
tally rows, not two thousand. SQLite has only row triggers.

Proposals are never deleted (``core.nodelete``), so there is no delete trigger: ``flush``
empties these tables with the rest.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection, transaction

#: Tally rows beyond which a read first folds them into one row per key.
COMPACT_ABOVE = 2_000
#: The advisory lock (PostgreSQL) that lets one reader fold the tally at a time.
COMPACT_LOCK = 0x6B67_7175

_PG_FUNCTIONS = """
CREATE OR REPLACE FUNCTION kgreview_queue_insert() RETURNS trigger AS $$
BEGIN
    INSERT INTO review_proposalflag (proposal_id, flag, status, priority, confidence)
        SELECT DISTINCT n.id, f.flag, n.status, n.priority, n.confidence
        FROM new_rows n
        CROSS JOIN LATERAL jsonb_array_elements_text(
            CASE WHEN jsonb_typeof(n.flags) = 'array' THEN n.flags ELSE '[]'::jsonb END
        ) AS f(flag);
    INSERT INTO review_queuetally (status, kind, relation_key, flags_text, n)
        SELECT status, kind, relation_key, flags_text, COUNT(*)
        FROM new_rows GROUP BY status, kind, relation_key, flags_text;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION kgreview_queue_update() RETURNS trigger AS $$
BEGIN
    -- Once per statement, over the rows it changed (a bulk decision closes a thousand
    -- proposals in one UPDATE: a row trigger ran its statements a thousand times).
    INSERT INTO review_queuetally (status, kind, relation_key, flags_text, n)
        SELECT status, kind, relation_key, flags_text, SUM(n)
        FROM (
            SELECT o.status, o.kind, o.relation_key, o.flags_text, -1 AS n
            FROM old_rows o JOIN new_rows w ON w.id = o.id
            WHERE (o.status, o.kind, o.relation_key, o.flags_text)
                  IS DISTINCT FROM (w.status, w.kind, w.relation_key, w.flags_text)
            UNION ALL
            SELECT w.status, w.kind, w.relation_key, w.flags_text, 1
            FROM old_rows o JOIN new_rows w ON w.id = o.id
            WHERE (o.status, o.kind, o.relation_key, o.flags_text)
                  IS DISTINCT FROM (w.status, w.kind, w.relation_key, w.flags_text)
        ) AS moved
        GROUP BY status, kind, relation_key, flags_text
        HAVING SUM(n) <> 0;
    DELETE FROM review_proposalflag f
        USING old_rows o JOIN new_rows w ON w.id = o.id
        WHERE f.proposal_id = w.id AND o.flags IS DISTINCT FROM w.flags;
    INSERT INTO review_proposalflag (proposal_id, flag, status, priority, confidence)
        SELECT DISTINCT w.id, f.flag, w.status, w.priority, w.confidence
        FROM old_rows o JOIN new_rows w ON w.id = o.id
        CROSS JOIN LATERAL jsonb_array_elements_text(
            CASE WHEN jsonb_typeof(w.flags) = 'array' THEN w.flags ELSE '[]'::jsonb END
        ) AS f(flag)
        WHERE o.flags IS DISTINCT FROM w.flags;
    UPDATE review_proposalflag f
        SET status = w.status, priority = w.priority, confidence = w.confidence
        FROM old_rows o JOIN new_rows w ON w.id = o.id
        WHERE f.proposal_id = w.id AND o.flags IS NOT DISTINCT FROM w.flags
          AND (o.status, o.priority, o.confidence)
              IS DISTINCT FROM (w.status, w.priority, w.confidence);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
"""

_PG_TRIGGERS = (
    "CREATE TRIGGER review_proposal_queue_insert AFTER INSERT ON review_proposal "
    "REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT "
    "EXECUTE FUNCTION kgreview_queue_insert()",
    "CREATE TRIGGER review_proposal_queue_update AFTER UPDATE ON review_proposal "
    "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT "
    "EXECUTE FUNCTION kgreview_queue_update()",
)

_PG_DROP = (
    "DROP TRIGGER IF EXISTS review_proposal_queue_insert ON review_proposal",
    "DROP TRIGGER IF EXISTS review_proposal_queue_update ON review_proposal",
    "DROP FUNCTION IF EXISTS kgreview_queue_insert()",
    "DROP FUNCTION IF EXISTS kgreview_queue_update()",
)

_SQLITE_CHANGED = (
    "(OLD.status IS NOT NEW.status OR OLD.kind IS NOT NEW.kind "
    "OR OLD.relation_key IS NOT NEW.relation_key OR OLD.flags_text IS NOT NEW.flags_text)"
)

_SQLITE_SORTED = (
    "(OLD.status IS NOT NEW.status OR OLD.priority IS NOT NEW.priority "
    "OR OLD.confidence IS NOT NEW.confidence)"
)

_SQLITE_TRIGGERS = (
    (
        "review_proposal_queue_insert",
        """AFTER INSERT ON review_proposal BEGIN
    INSERT INTO review_proposalflag (proposal_id, flag, status, priority, confidence)
        SELECT DISTINCT NEW.id, value, NEW.status, NEW.priority, NEW.confidence
        FROM json_each(NEW.flags)
        WHERE json_valid(NEW.flags) AND json_type(NEW.flags) = 'array';
    INSERT INTO review_queuetally (status, kind, relation_key, flags_text, n)
        VALUES (NEW.status, NEW.kind, NEW.relation_key, NEW.flags_text, 1);
END""",
    ),
    (
        "review_proposal_queue_update",
        f"""AFTER UPDATE ON review_proposal
WHEN {_SQLITE_CHANGED} OR OLD.flags IS NOT NEW.flags OR {_SQLITE_SORTED} BEGIN
    INSERT INTO review_queuetally (status, kind, relation_key, flags_text, n)
        SELECT OLD.status, OLD.kind, OLD.relation_key, OLD.flags_text, -1
        WHERE {_SQLITE_CHANGED};
    INSERT INTO review_queuetally (status, kind, relation_key, flags_text, n)
        SELECT NEW.status, NEW.kind, NEW.relation_key, NEW.flags_text, 1
        WHERE {_SQLITE_CHANGED};
    DELETE FROM review_proposalflag
        WHERE proposal_id = NEW.id AND OLD.flags IS NOT NEW.flags;
    INSERT INTO review_proposalflag (proposal_id, flag, status, priority, confidence)
        SELECT DISTINCT NEW.id, value, NEW.status, NEW.priority, NEW.confidence
        FROM json_each(NEW.flags)
        WHERE OLD.flags IS NOT NEW.flags
          AND json_valid(NEW.flags) AND json_type(NEW.flags) = 'array';
    UPDATE review_proposalflag
        SET status = NEW.status, priority = NEW.priority, confidence = NEW.confidence
        WHERE proposal_id = NEW.id AND OLD.flags IS NEW.flags AND {_SQLITE_SORTED};
END""",
    ),
)

_BACKFILL_FLAGS = {
    "postgresql": """
INSERT INTO review_proposalflag (proposal_id, flag, status, priority, confidence)
    SELECT DISTINCT p.id, f.flag, p.status, p.priority, p.confidence FROM review_proposal p
    CROSS JOIN LATERAL jsonb_array_elements_text(
        CASE WHEN jsonb_typeof(p.flags) = 'array' THEN p.flags ELSE '[]'::jsonb END
    ) AS f(flag)""",
    "sqlite": """
INSERT INTO review_proposalflag (proposal_id, flag, status, priority, confidence)
    SELECT DISTINCT p.id, f.value, p.status, p.priority, p.confidence
    FROM review_proposal p, json_each(p.flags) f
    WHERE json_valid(p.flags) AND json_type(p.flags) = 'array'""",
}

_BACKFILL_TALLY = """
INSERT INTO review_queuetally (status, kind, relation_key, flags_text, n)
    SELECT status, kind, relation_key, flags_text, COUNT(*) FROM review_proposal
    GROUP BY status, kind, relation_key, flags_text"""


def install_triggers(conn) -> None:
    """Put the triggers on ``review_proposal`` (again): PostgreSQL from the migration,
    SQLite also after every ``migrate``, since rebuilding a table there drops them."""
    with conn.cursor() as cursor:
        if conn.vendor == "postgresql":
            cursor.execute(_PG_FUNCTIONS)
            for statement in _PG_DROP[:2] + _PG_TRIGGERS:
                cursor.execute(statement)
        elif conn.vendor == "sqlite":
            for name, body in _SQLITE_TRIGGERS:
                cursor.execute(f'CREATE TRIGGER IF NOT EXISTS "{name}" {body}')


def remove_triggers(conn) -> None:
    with conn.cursor() as cursor:
        if conn.vendor == "postgresql":
            for statement in _PG_DROP:
                cursor.execute(statement)
        elif conn.vendor == "sqlite":
            for name, _body in _SQLITE_TRIGGERS:
                cursor.execute(f'DROP TRIGGER IF EXISTS "{name}"')


def rebuild(conn=None) -> None:
    """Refill both tables from the proposals as they are (the migration's backfill; also a
    repair if rows were ever written with the triggers off)."""
    conn = conn or connection
    with transaction.atomic(using=conn.alias), conn.cursor() as cursor:
        cursor.execute("DELETE FROM review_proposalflag")
        cursor.execute("DELETE FROM review_queuetally")
        cursor.execute(_BACKFILL_FLAGS.get(conn.vendor, _BACKFILL_FLAGS["sqlite"]))
        cursor.execute(_BACKFILL_TALLY)


def install_triggers_after_migrate(sender, using="default", **kwargs) -> None:
    from django.db import connections

    conn = connections[using]
    if conn.vendor == "sqlite" and "review_queuetally" in conn.introspection.table_names():
        install_triggers(conn)


# --- Reading the tally ------------------------------------------------------------------

TallyRow = tuple[str, str, str, str, int]


def compact() -> None:
    """Fold the tally into one row per key. The rows summed are exactly the rows this
    statement deleted, so a writer's row committed meanwhile is kept, never lost."""
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # One compaction at a time; another reader finds it under way and goes on.
            cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [COMPACT_LOCK])
            if not cursor.fetchone()[0]:
                return
        cursor.execute(
            "DELETE FROM review_queuetally RETURNING status, kind, relation_key, flags_text, n"
        )
        sums: dict[tuple[str, str, str, str], int] = {}
        for status, kind, relation, flags, n in cursor.fetchall():
            key = (status, kind, relation, flags)
            sums[key] = sums.get(key, 0) + n
        rows = [(*key, n) for key, n in sums.items() if n]
        if rows:
            cursor.executemany(
                "INSERT INTO review_queuetally (status, kind, relation_key, flags_text, n) "
                "VALUES (%s, %s, %s, %s, %s)",
                rows,
            )


def tally_rows() -> list[TallyRow]:
    """(status, kind, relation_key, flags_text, how many proposals) for every key held by
    at least one proposal, read from the tally: one small query."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT status, kind, relation_key, flags_text, SUM(n), COUNT(*) "
            "FROM review_queuetally GROUP BY status, kind, relation_key, flags_text"
        )
        found = cursor.fetchall()
    if sum(row[5] for row in found) > COMPACT_ABOVE and not connection.in_atomic_block:
        compact()
    return [(s, k, r, f, int(n)) for s, k, r, f, n, _rows in found if n]


def flag_set(flags_text: str) -> frozenset[str]:
    return frozenset(x for x in flags_text.split("|") if x)


def grouped(rows: Iterable[TallyRow]) -> list[tuple[str, str, str, frozenset[str], int]]:
    return [(s, k, r, flag_set(f), n) for s, k, r, f, n in rows]
