"""Names ending in an acronym with a capital S get their own key.

``construction.text.name_key`` used to read the final S of "HTTPS", "QoS" or "SaaS" as
a plural, so "HTTPS" shared the key of "HTTP" and resolved to it. Only names ending in
"S" can have a changed key; they are read again, and the processes holding names in
memory are told to rebuild (one name journal row naming no concept).
"""

from django.db import migrations

from construction.text import name_key


def rekey(apps, schema_editor):
    Alias = apps.get_model("graph", "ConceptAlias")
    changed = []
    # On SQLite ``endswith`` ignores case: more rows are read, the same ones change.
    rows = Alias.objects.filter(name__endswith="S").only("pk", "name", "key")
    for alias in rows.iterator(chunk_size=5000):
        key = name_key(alias.name)[:200]
        if key != alias.key:
            alias.key = key
            changed.append(alias)
    for start in range(0, len(changed), 5000):
        Alias.objects.bulk_update(changed[start : start + 5000], ["key"])
    if changed:
        apps.get_model("graph", "NameChange").objects.create()


class Migration(migrations.Migration):
    dependencies = [
        ("graph", "0013_name_journal"),
    ]

    operations = [
        migrations.RunPython(rekey, migrations.RunPython.noop),
    ]
