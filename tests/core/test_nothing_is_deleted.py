"""Every installed model is either guarded against deletes or named here with the reason.

Guarded means: ``instance.delete()``, ``Model.delete(instance)`` (the base-class method,
bypassing any override), ``queryset.delete()`` and ``QuerySet.delete(qs)`` all raise and
keep the row, on every database; a raw SQL ``DELETE`` is refused by a trigger (PostgreSQL
and SQLite); and for append-only models an ``UPDATE`` is refused too.
"""

from __future__ import annotations

import contextlib

import pytest
from django.apps import apps
from django.contrib.admin.models import ADDITION, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import DatabaseError, connection, models, transaction
from django.db.models import ProtectedError, RestrictedError
from django.db.models.deletion import Collector

from kgreview.agents.models import (
    AgentRun,
    AgentRunItem,
    ChunkExtraction,
    DroppedCandidate,
    ExtractionRecord,
)
from kgreview.api.models import ApiToken, ProposalBatch, SubmittedProposal
from kgreview.core.audit import record
from kgreview.core.errors import HardDeleteForbidden, ImmutableRecord
from kgreview.core.nodelete import guarded_models
from kgreview.exports.models import Release, ReleaseBuild, ReleaseFile
from kgreview.graph import services as graph_services
from kgreview.graph.models import (
    Attribute,
    AttributeValue,
    Concept,
    ConceptAlias,
    ConceptTypeChange,
    RelationPattern,
    SourceConcept,
    SourceFile,
)
from kgreview.questions.models import CompetencyQuestion, CompetencyRun, GapProposal, QuestionResult
from kgreview.review.models import (
    Assignment,
    Comment,
    CommentRevision,
    Decision,
    Discussion,
    EdgeProvenance,
    Example,
    Proposal,
    ProposalOrigin,
    Vote,
)

# Models whose rows may be deleted, and why. A new model must be guarded (subclass
# NoDeleteModel or AppendOnlyModel, or list it in core.nodelete.EXTERNAL_NO_DELETE, and
# add its trigger migration) or be named here. Entries for apps not installed are kept
# so a branch that adds the app passes.
DELETABLE = {
    "auth.Permission": "Django's registry of permissions, rebuilt by migrate",
    "auth.Group": "roles: who may do what now, not a record of what was done",
    "auth.Group_permissions": "a role's current permissions (a link table)",
    "auth.User_groups": "an account's current roles (a link table)",
    "auth.User_user_permissions": "an account's current extra permissions (a link table)",
    "contenttypes.ContentType": "Django's registry of models; stale ones are removed by design",
    "sessions.Session": "login sessions: deleted at logout and by clearsessions by design",
    "django_celery_beat.PeriodicTask": "the scheduler's configuration, current state only; "
    "pausing or resuming kgreview's schedules writes the curation log",
    "django_celery_beat.PeriodicTasks": "celery beat's 'schedules changed' marker",
    "django_celery_beat.IntervalSchedule": "a schedule's timing, configuration",
    "django_celery_beat.CrontabSchedule": "a schedule's timing, configuration",
    "django_celery_beat.SolarSchedule": "a schedule's timing, configuration",
    "django_celery_beat.ClockedSchedule": "a one-off schedule's timing, configuration",
    "review.ProposalFlag": "the flags of each proposal as rows, derived from the proposals by "
    "triggers and rebuilt from them (review.queue_index); it carries no history",
    "review.QueueTally": "the queue's counts as +1/-1 rows that are folded together, derived "
    "from the proposals by triggers; it carries no history",
    "graph.NameChange": "the name journal: which concepts' names changed, for the processes "
    "that hold names in memory; the names keep their history in ConceptAlias",
    "graph.ConceptOrder": "positions of concepts in an acyclic relation's topological order, "
    "derived from the edges and rebuilt from them; it carries no history",
    "review.Lease": "who holds which open card right now, renewed and let go by updates; "
    "never deleted by the app, but it records nothing that happened",
    "review.DoubleReview": "a relation's double-review share, current configuration; every "
    "change writes the curation log",
    "agents.WorkerHeartbeat": "liveness of worker processes, overwritten every minute",
    "agents.Mutex": "a row to lock so writers do not interleave; it holds no data",
    "axes.AccessAttempt": "login throttling counters, deletable by design when a lockout "
    "is cleared",
    "axes.AccessLog": "login throttling counters, deletable by design when a lockout is cleared",
    "axes.AccessFailureLog": "login throttling counters, deletable by design when a lockout "
    "is cleared",
    "axes.AccessAttemptExpiration": "when a login throttling counter expires; it goes with "
    "its counter",
}

GUARDED = {model._meta.label: append_only for model, append_only in guarded_models().items()}
REFUSED = (HardDeleteForbidden, ProtectedError, RestrictedError)


def test_every_model_is_guarded_or_says_why_it_may_be_deleted():
    """A model in neither list fails, telling the developer what to do."""
    unexplained = [
        model._meta.label
        for model in apps.get_models(include_auto_created=True)
        if model._meta.label not in GUARDED and model._meta.label not in DELETABLE
    ]
    assert not unexplained, (
        f"{unexplained}: say whether these rows carry history. If they do, subclass "
        "kgreview.core.nodelete.NoDeleteModel (AppendOnlyModel if never changed), or add "
        "the label to EXTERNAL_NO_DELETE for another app's model, and add a migration "
        "installing its PostgreSQL trigger with core.nodelete.history_triggers. If they do "
        "not, add the label to DELETABLE in this test with the reason."
    )
    both = sorted(set(GUARDED) & set(DELETABLE))
    assert not both, f"{both} are guarded and also listed as deletable"


def test_no_deletable_entry_names_a_kgreview_model_that_is_gone():
    """The allow-list does not outlive the models it excuses."""
    ours = {"core", "graph", "review", "agents", "api", "questions"}
    stale = [label for label in DELETABLE if label.split(".")[0] in ours and not _installed(label)]
    assert not stale


def test_history_tables_the_issue_found_unguarded_are_guarded():
    """Aliases, tokens, run items, extraction records, dropped candidates, source links,
    competency questions, their runs and results."""
    for model in (
        CompetencyQuestion,
        CompetencyRun,
        QuestionResult,
        ConceptAlias,
        ApiToken,
        AgentRunItem,
        ExtractionRecord,
        ChunkExtraction,
        DroppedCandidate,
        SourceConcept,
        LogEntry,
    ):
        assert model._meta.label in GUARDED


def _installed(label: str) -> bool:
    try:
        apps.get_model(label)
    except LookupError:
        return False
    return True


@pytest.fixture
def history(f, django_user_model):
    """One row of every guarded model, made the way the app makes them (or close)."""
    user = f.user(role="curator")
    a, b = f.concept("Alpha"), f.concept("Beta")
    src = f.source()
    revision = src.current_revision
    edge = f.edge(a, b)
    proposal = Proposal.objects.create(
        kind="add_concept", payload={"name": "Gamma"}, confidence=0.8, dedup_key="add:gamma"
    )
    run = AgentRun.objects.create(agent="construct")
    question = CompetencyQuestion.objects.create(
        text="What is part of Beta?", expect="concepts", expected_names=["Alpha"]
    )
    competency_run = CompetencyRun.objects.create(trigger="cli")
    graph_services.concept_type_create(key="thing", label="Thing", acting_user=None)
    typed = graph_services.concept_set_type(concept=a, type_key="thing", acting_user=None)
    rows = [
        user,
        a,
        ConceptAlias.all_objects.filter(concept=a).first(),
        src,
        revision,
        edge,
        edge.relation,
        proposal,
        Decision.objects.create(proposal=proposal, action="hold", proposal_version=1),
        run,
        AgentRunItem.objects.create(run=run, source=src, revision=revision),
        ExtractionRecord.objects.create(
            revision=revision, extractor="offline:x:1", status="done", output={}, run=run
        ),
        ChunkExtraction.objects.create(key="k" * 64, extractor="offline:x:1", output={}, run=run),
        DroppedCandidate.objects.create(
            run=run, revision=revision, reason="unknown_relation", candidate={}
        ),
        SourceConcept.objects.create(source=src, concept=a, revision=revision),
        typed.type,
        ConceptTypeChange.objects.get(concept=typed),
        RelationPattern.objects.create(relation=edge.relation, domain=typed.type, range=typed.type),
        attribute := Attribute.objects.create(
            concept_type=typed.type, key="size", label="Size", datatype="integer"
        ),
        AttributeValue.objects.create(
            concept=a, attribute=attribute, value="3", recorded_at=revision.created_at
        ),
        SourceFile.objects.create(sha256="0" * 64, media_type="text/plain", size=1, data=b"x"),
        token := ApiToken.objects.create(
            user=user, name="planner", prefix="abcd1234", key_hash="f" * 64
        ),
        batch := ProposalBatch.objects.create(
            scope=f"token-{token.pk}", key="k", body_sha256="0" * 64, token=token, user=user
        ),
        SubmittedProposal.objects.create(proposal=proposal, batch=batch),
        release := Release.objects.create(
            name="2026-12", as_of=revision.created_at, changes={}, validation={}, conforms=True
        ),
        ReleaseFile.objects.create(
            release=release,
            format="jsonld",
            label="JSON-LD",
            filename="graph.jsonld",
            content_type="application/ld+json",
            size=1,
            sha256="0" * 64,
        ),
        ReleaseBuild.objects.create(name="2026-12", as_of=revision.created_at),
        question,
        competency_run,
        GapProposal.objects.create(question=question, proposal=proposal),
        ProposalOrigin.objects.create(agent="construct", agent_label="Construction", run=run.pk),
        EdgeProvenance.objects.create(edge=edge, proposal=proposal),
        Vote.objects.create(
            proposal=proposal,
            user=user,
            action="accept",
            label="accept",
            kind=proposal.kind,
            proposal_version=1,
            created_at=revision.created_at,
        ),
        Assignment.objects.create(name="Week 1", user=user, created_by=user),
        comment := Comment.objects.create(
            proposal=proposal, author=user, body="Why?", created_at=revision.created_at
        ),
        CommentRevision.objects.create(
            comment=comment, body="Why?", written_at=revision.created_at
        ),
        Discussion.objects.create(
            proposal=proposal, question=comment, asked_by=user, asked_at=revision.created_at
        ),
        Example.objects.create(
            proposal=proposal, relation=edge.relation, chosen_by=user, chosen_at=revision.created_at
        ),
        QuestionResult.objects.create(
            run=competency_run,
            question=question,
            passed=False,
            status="no_path",
            words="Missing 1 of 1: Alpha.",
            graph_at=competency_run.created_at,
        ),
        record(action="concept.create", subject=a, summary="A row for the test.", acting_user=user),
        LogEntry.objects.create(
            user=user,
            content_type=ContentType.objects.get_for_model(type(a)),
            object_id=str(a.pk),
            object_repr=str(a),
            action_flag=ADDITION,
        ),
    ]
    return {type(row)._meta.concrete_model._meta.label: row for row in rows}


def _row(history, label):
    assert label in history, f"the history fixture makes no {label} row: add one"
    return history[label]


def _ways_to_delete(model, obj):
    """Every ORM path to a delete, overrides bypassed included."""
    same = model._base_manager.filter(pk=obj.pk)
    return {
        "instance.delete()": lambda: obj.delete(),
        "Model.delete(instance)": lambda: models.Model.delete(obj),
        "queryset.delete()": lambda: model._default_manager.filter(pk=obj.pk).delete(),
        "QuerySet.delete(queryset)": lambda: models.QuerySet.delete(same),
        "queryset._raw_delete()": lambda: models.QuerySet._raw_delete(same, same.db),
    }


@pytest.mark.django_db
@pytest.mark.parametrize("label", sorted(GUARDED))
def test_the_orm_refuses_every_way_to_delete_a_history_row(history, label):
    """Overrides bypassed or not, the row stays."""
    model = apps.get_model(label)
    obj = _row(history, label)
    for way, attempt in _ways_to_delete(model, obj).items():
        if way == "queryset._raw_delete()":
            continue  # checked at the database below: it skips every Python hook
        with pytest.raises(REFUSED), transaction.atomic():
            attempt()
        assert model._base_manager.filter(pk=obj.pk).exists(), f"{way} deleted a {label}"


@pytest.mark.django_db
@pytest.mark.parametrize("label", sorted(GUARDED))
def test_the_delete_collector_itself_refuses_a_history_row(label):
    """The receiver, not a related row's PROTECT, is what stops ``Model.delete``; and no
    cascade can take the fast path past it."""
    model = apps.get_model(label)
    with pytest.raises(HardDeleteForbidden, match="never deleted"):
        models.Model.delete(model(pk=987654321))
    assert Collector(using="default", origin=None).can_fast_delete(model) is False


@pytest.mark.django_db
@pytest.mark.parametrize("label", sorted(GUARDED))
def test_the_database_refuses_a_raw_delete_of_a_history_row(history, label):
    """A trigger refuses a raw DELETE, on PostgreSQL and on SQLite."""
    model = apps.get_model(label)
    obj = _row(history, label)
    with pytest.raises(DatabaseError, match="never deletes"), transaction.atomic():
        models.QuerySet._raw_delete(model._base_manager.filter(pk=obj.pk), "default")
    with (
        pytest.raises(DatabaseError, match="never deletes"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(f'DELETE FROM "{model._meta.db_table}"')
    assert model._base_manager.filter(pk=obj.pk).exists()


APPEND_ONLY = sorted(label for label, append_only in GUARDED.items() if append_only)


@pytest.mark.django_db
@pytest.mark.parametrize("label", APPEND_ONLY)
def test_append_only_rows_cannot_be_changed_by_any_path(history, label):
    """save() (override bypassed too), update() and raw UPDATE are all refused."""
    model = apps.get_model(label)
    obj = _row(history, label)
    with pytest.raises(ImmutableRecord):
        obj.save()
    with pytest.raises(ImmutableRecord), transaction.atomic():
        models.Model.save(obj)
    with pytest.raises(ImmutableRecord):
        model._default_manager.filter(pk=obj.pk).update(pk=obj.pk)
    pk = model._meta.pk.column
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(f'UPDATE "{model._meta.db_table}" SET "{pk}" = "{pk}"')


@pytest.mark.django_db
def test_the_fixture_makes_a_row_of_every_guarded_model(history):
    """No guarded model goes untested for want of a row."""
    assert sorted(history) == sorted(GUARDED)


@pytest.mark.django_db(transaction=True)
def test_flush_still_empties_guarded_tables_and_puts_the_triggers_back(f):
    """Test teardown and resets flush every table; the guard is back afterwards."""
    concept = f.concept("Alpha")
    call_command("flush", interactive=False, verbosity=0)
    assert not ConceptAlias.all_objects.filter(concept_id=concept.pk).exists()
    again = f.concept("Beta")
    with (
        pytest.raises(DatabaseError, match="never deletes"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("DELETE FROM graph_concept WHERE id = %s", [again.pk])
    if connection.vendor == "postgresql":  # flush switched the TRUNCATE triggers back on
        with (
            pytest.raises(DatabaseError, match="never deletes"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute("TRUNCATE graph_concept CASCADE")
    assert Concept.objects.filter(pk=again.pk).exists()


# --- Raw SQL that rewrites or empties history without a DELETE or an UPDATE statement -----
# SQLite's INSERT OR REPLACE deletes the row it replaces, and fires delete triggers for it
# only with ``PRAGMA recursive_triggers`` on; PostgreSQL's TRUNCATE fires no row trigger.


@pytest.fixture
def on_sqlite(db):
    if connection.vendor != "sqlite":
        pytest.skip("INSERT OR REPLACE and UPDATE OR REPLACE are SQLite's")


def _columns(model) -> list[str]:
    return [field.column for field in model._meta.local_concrete_fields]


def _copy_of_row(model, *, pk_value: str | None = None, set_column: tuple[str, str] = ("", "")):
    """``SELECT`` of one stored row's columns (by ``%s`` pk), the pk or one column swapped."""
    pk = model._meta.pk.column
    picks = []
    for column in _columns(model):
        if column == pk and pk_value is not None:
            picks.append(pk_value)
        elif column == set_column[0]:
            picks.append(set_column[1])
        else:
            picks.append(f'"{column}"')
    quoted = ", ".join(f'"{column}"' for column in _columns(model))
    table = model._meta.db_table
    return quoted, f'SELECT {", ".join(picks)} FROM "{table}" WHERE "{pk}" = %s'


def _unique_keys(model) -> bool:
    """Whether the model has a unique key besides its primary key."""
    meta = model._meta
    return bool(
        any(f.unique and not f.primary_key for f in meta.local_concrete_fields)
        or meta.unique_together
        or any(isinstance(c, models.UniqueConstraint) for c in meta.constraints)
    )


def _stored(model, obj) -> dict:
    return model._base_manager.filter(pk=obj.pk).values().get()


@pytest.mark.django_db
def test_every_sqlite_connection_fires_delete_triggers_on_replace(on_sqlite):
    """``recursive_triggers`` is on: a REPLACE's delete of the old row meets the guard."""
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA recursive_triggers")
        assert cursor.fetchone()[0] == 1


@pytest.mark.parametrize("label", sorted(GUARDED))
def test_insert_or_replace_cannot_rewrite_a_history_row(on_sqlite, history, label):
    """``INSERT OR REPLACE`` of a stored row's primary key is refused; the row stays as it was."""
    model = apps.get_model(label)
    obj = _row(history, label)
    before = _stored(model, obj)
    columns, select = _copy_of_row(model)
    with (
        pytest.raises(DatabaseError, match="never deletes"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            f'INSERT OR REPLACE INTO "{model._meta.db_table}" ({columns}) {select}', [obj.pk]
        )
    assert _stored(model, obj) == before


@pytest.mark.parametrize(
    "label", sorted(label for label in GUARDED if _unique_keys(apps.get_model(label)))
)
def test_insert_or_replace_on_a_unique_key_cannot_remove_a_history_row(on_sqlite, history, label):
    """A copy under a new id that repeats a unique key (a name, a slug, a token's prefix)
    would replace the stored row; the stored row stays, unchanged."""
    model = apps.get_model(label)
    obj = _row(history, label)
    before = _stored(model, obj)
    columns, select = _copy_of_row(model, pk_value=str(obj.pk + 1_000_000))
    with contextlib.suppress(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f'INSERT OR REPLACE INTO "{model._meta.db_table}" ({columns}) {select}', [obj.pk]
        )
    assert _stored(model, obj) == before


def test_insert_or_replace_cannot_turn_an_accept_into_a_reject(on_sqlite, history):
    """The red team's forgery: the decision keeps its action and its note."""
    decision = _row(history, "review.Decision")
    columns, select = _copy_of_row(Decision, set_column=("action", "'reject'"))
    with (
        pytest.raises(DatabaseError, match="never deletes"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            f"INSERT OR REPLACE INTO review_decision ({columns}) {select}", [decision.pk]
        )
    assert Decision.objects.get(pk=decision.pk).action == decision.action


def test_update_or_replace_cannot_remove_a_history_row(on_sqlite, history):
    """Moving one concept onto another's id would delete the other; it is refused."""
    alpha = _row(history, "graph.Concept")
    beta = Concept.objects.exclude(pk=alpha.pk).first()
    with (
        pytest.raises(DatabaseError, match="never deletes"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            "UPDATE OR REPLACE graph_concept SET id = %s WHERE id = %s", [beta.pk, alpha.pk]
        )
    assert Concept.objects.get(pk=beta.pk).name == beta.name


@pytest.mark.django_db
@pytest.mark.parametrize("label", APPEND_ONLY)
def test_an_upsert_cannot_rewrite_an_append_only_row(history, label):
    """``INSERT … ON CONFLICT DO UPDATE`` is an UPDATE, refused on PostgreSQL and SQLite."""
    model = apps.get_model(label)
    obj = _row(history, label)
    before = _stored(model, obj)
    pk = model._meta.pk.column
    columns, select = _copy_of_row(model)
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            f'INSERT INTO "{model._meta.db_table}" ({columns}) {select} '
            f'ON CONFLICT ("{pk}") DO UPDATE SET "{pk}" = EXCLUDED."{pk}"',
            [obj.pk],
        )
    assert _stored(model, obj) == before


# A plain TRUNCATE of a table other tables point at is refused by PostgreSQL for the
# foreign key before any trigger runs; with CASCADE only the trigger stands in the way.
TRUNCATE_REFUSALS = {
    "": "never deletes|referenced in a foreign key constraint",
    " CASCADE": "never deletes",
}


@pytest.mark.parametrize("label", sorted(GUARDED))
@pytest.mark.parametrize("cascade", sorted(TRUNCATE_REFUSALS), ids=["truncate", "cascade"])
def test_the_database_refuses_to_truncate_a_history_table(on_postgres, history, label, cascade):
    """No row trigger sees a TRUNCATE: a statement trigger refuses it, and the rows stay."""
    model = apps.get_model(label)
    obj = _row(history, label)
    with (
        pytest.raises(DatabaseError, match=TRUNCATE_REFUSALS[cascade]),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # as if the rows were committed
        cursor.execute(f'TRUNCATE "{model._meta.db_table}"{cascade}')
    assert model._base_manager.filter(pk=obj.pk).exists()


# (a table kgreview may empty, a history table whose rows point at it): TRUNCATE … CASCADE
# of the first would empty the second.
CASCADES_INTO_HISTORY = sorted(
    (field.related_model._meta.label, label)
    for label in GUARDED
    for field in apps.get_model(label)._meta.local_concrete_fields
    if field.is_relation and field.related_model._meta.label not in GUARDED
)


def test_some_deletable_table_is_referenced_by_history():
    """The cascade test below has a case to check (LogEntry points at ContentType)."""
    assert ("contenttypes.ContentType", "admin.LogEntry") in CASCADES_INTO_HISTORY


@pytest.mark.parametrize(("parent", "label"), CASCADES_INTO_HISTORY)
def test_truncate_cascade_from_another_table_cannot_empty_a_history_table(
    on_postgres, history, parent, label
):
    """Every table TRUNCATE … CASCADE reaches fires its trigger: the history rows stay."""
    model = apps.get_model(label)
    obj = _row(history, label)
    with (
        pytest.raises(DatabaseError, match="never deletes"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(f'TRUNCATE "{apps.get_model(parent)._meta.db_table}" CASCADE')
    assert model._base_manager.filter(pk=obj.pk).exists()


@pytest.mark.django_db
def test_the_sqlite_shell_fires_delete_triggers_on_replace_too(on_sqlite, capfd):
    """``manage.py dbshell`` runs the app's connection setup before what is typed."""
    call_command("dbshell", "--", "PRAGMA recursive_triggers;")
    assert capfd.readouterr().out.splitlines()[-1] == "1"
