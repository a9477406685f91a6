"""A relation type may name its inverse ("A prerequisite B" is "B builds_on A"); the
starting vocabulary's pair is declared when both of its relations are there."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import F, Q

PAIR = ("prerequisite", "builds_on")


def declare_pair(apps, schema_editor):
    RelationType = apps.get_model("graph", "RelationType")
    rows = {r.key: r for r in RelationType.objects.filter(key__in=PAIR)}
    if len(rows) != 2:
        return
    first, second = rows[PAIR[0]], rows[PAIR[1]]
    # Only two directed relations of one kind (both acyclic or neither) that name no
    # other inverse make a pair: a team that gave the keys other meanings keeps them.
    if first.symmetric or second.symmetric or first.acyclic != second.acyclic:
        return
    if first.inverse_id or second.inverse_id:
        return
    RelationType.objects.filter(pk=first.pk).update(inverse=second.pk)
    RelationType.objects.filter(pk=second.pk).update(inverse=first.pk)


class Migration(migrations.Migration):
    dependencies = [
        ("graph", "0018_guidelines"),
    ]

    operations = [
        migrations.AddField(
            model_name="relationtype",
            name="inverse",
            field=models.OneToOneField(
                blank=True,
                help_text="The relation stating the same fact with the ends swapped "
                '("A is a prerequisite for B" is "B builds on A").',
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="graph.relationtype",
            ),
        ),
        migrations.AddConstraint(
            model_name="relationtype",
            constraint=models.CheckConstraint(
                condition=Q(inverse__isnull=True) | Q(symmetric=False),
                name="relationtype_symmetric_is_own_inverse",
                violation_error_message="A symmetric relation is its own inverse.",
            ),
        ),
        migrations.AddConstraint(
            model_name="relationtype",
            constraint=models.CheckConstraint(
                condition=~Q(inverse=F("pk")),
                name="relationtype_inverse_is_another",
                violation_error_message="A directed relation is not its own inverse.",
            ),
        ),
        migrations.RunPython(declare_pair, migrations.RunPython.noop),
    ]
