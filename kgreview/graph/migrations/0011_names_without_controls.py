"""Concept names and aliases in their one normal form (``construction.text.normal_name``):
NFC, no control, zero-width or bidi characters, one space between words.

Before this, "\\u200bEmbeddings" could be a second concept beside "Embeddings", and
"Evil\\u202egnp.exe" printed backwards. A cleaned name another concept already holds
keeps the concept apart by its id ("Embeddings (#12)") so a curator can merge the two; a
cleaned alias that would repeat a current name is taken off (its row stays, removed).
Each change writes a curation log row by the system.
"""

from django.db import migrations
from django.utils import timezone

from construction.text import name_key, normal_name

NAME_MAX = 200


def _log(Entry, *, action, concept_id, summary, before, after):
    Entry.objects.create(
        user=None,
        action=action,
        subject_type="concept",
        subject_id=str(concept_id),
        summary=summary[:500],
        before=before,
        after=after,
    )


def _free_name(wanted: str, pk: int, taken) -> str:
    name = wanted or f"Concept {pk}"
    if taken(name.lower()):
        name = f"{name[: NAME_MAX - 12]} (#{pk})"
    return name


def clean_names(apps, schema_editor):
    Concept = apps.get_model("graph", "Concept")
    Alias = apps.get_model("graph", "ConceptAlias")
    Entry = apps.get_model("core", "AuditEntry")
    now = timezone.now()
    concept_names = {n.lower(): pk for pk, n in Concept.objects.values_list("pk", "name")}
    current = {
        n.lower(): (pk, cid)
        for pk, n, cid in Alias.objects.filter(removed_at__isnull=True).values_list(
            "pk", "name", "concept_id"
        )
    }
    dirty = [
        (pk, name)
        for pk, name in Concept.objects.order_by("pk").values_list("pk", "name")
        if normal_name(name) != name
    ]
    for pk, name in dirty:

        def taken(lname, pk=pk):
            holder = current.get(lname)
            return concept_names.get(lname, pk) != pk or (holder is not None and holder[1] != pk)

        new = _free_name(normal_name(name)[:NAME_MAX], pk, taken)
        Concept.objects.filter(pk=pk).update(name=new)
        concept_names.pop(name.lower(), None)
        concept_names[new.lower()] = pk
        canonical = Alias.objects.filter(
            concept_id=pk, kind="canonical", removed_at__isnull=True
        ).first()
        if canonical is not None:
            current.pop(canonical.name.lower(), None)
            Alias.objects.filter(pk=canonical.pk).update(name=new, key=name_key(new)[:200])
            current[new.lower()] = (canonical.pk, pk)
        _log(
            Entry,
            action="concept.rename",
            concept_id=pk,
            summary=f"Renamed the concept {name!r} to “{new}”: invisible characters removed.",
            before={"name": name},
            after={"name": new},
        )
    for alias in Alias.objects.exclude(kind="canonical").order_by("pk"):
        new = normal_name(alias.name)[:NAME_MAX]
        if new == alias.name:
            continue
        if alias.removed_at is not None:
            if new:
                Alias.objects.filter(pk=alias.pk).update(name=new, key=name_key(new)[:200])
            continue
        current.pop(alias.name.lower(), None)
        if not new or new.lower() in current:
            Alias.objects.filter(pk=alias.pk).update(removed_at=now)
            _log(
                Entry,
                action="concept.remove_alias",
                concept_id=alias.concept_id,
                summary=f"Took off the name {alias.name!r}: without its invisible characters "
                "it repeats a name already in use.",
                before={"alias": alias.name},
                after={},
            )
            continue
        Alias.objects.filter(pk=alias.pk).update(name=new, key=name_key(new)[:200])
        current[new.lower()] = (alias.pk, alias.concept_id)
        _log(
            Entry,
            action="concept.rename_alias",
            concept_id=alias.concept_id,
            summary=f"Respelled the name {alias.name!r} as “{new}”: invisible characters removed.",
            before={"alias": alias.name},
            after={"alias": new},
        )


class Migration(migrations.Migration):
    dependencies = [
        ("graph", "0010_nodelete_history"),
        ("core", "0002_audit_append_only"),
    ]

    operations = [migrations.RunPython(clean_names, migrations.RunPython.noop)]
