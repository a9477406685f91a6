"""An edge no longer points up at review: its proposal, the decision that wrote it and the
one that retired it are review's ``EdgeProvenance`` now, which review's 0017 filled from
these columns before this migration drops them (and which fills them back, reversed).

Graph's earlier migrations still depend on review's first one, for the columns dropped
here: databases already deployed have applied them as they are."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("graph", "0014_acronym_keys"),
        ("review", "0017_edge_provenance"),
    ]

    operations = [
        migrations.RemoveField(model_name="edge", name="proposal"),
        migrations.RemoveField(model_name="edge", name="decision"),
        migrations.RemoveField(model_name="edge", name="invalidation_decision"),
    ]
