"""The topological order of each acyclic relation (``kgreview.graph.order``), so that the
cycle check of a new edge no longer walks everything downstream of it under the
relation's lock.

Adds ``ConceptOrder`` (a concept's position in one relation), ``RelationType.ordered``
(whether the positions are an order of its active edges) and ``Edge.in_order`` (whether
the graph services placed the row's ends; an index finds the rows written otherwise), and
an index on what leads into a concept in a relation, for the backward search.
Then builds every acyclic relation's order from its active edges with Kahn's algorithm,
through ``order.rebuild_orders``, the same function the benchmarks and
``manage.py order_relations`` call. A relation whose edges already hold a cycle gets
none and is marked unordered; its cycle check works without positions until the cycle is
gone and the order rebuilt. Active edges of the other relations need no order: they are
marked as in it.
"""

import django.db.models.deletion
from django.db import migrations, models


def build_orders(apps, schema_editor):
    from kgreview.graph.order import rebuild_orders

    rebuild_orders(apps=apps)
    Edge = apps.get_model("graph", "Edge")
    Edge.objects.filter(status="active", relation__acyclic=False, in_order=False).update(
        in_order=True
    )


class Migration(migrations.Migration):
    dependencies = [("graph", "0011_names_without_controls")]

    operations = [
        migrations.CreateModel(
            name="ConceptOrder",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("position", models.BigIntegerField()),
                (
                    "concept",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="graph.concept",
                    ),
                ),
                (
                    "relation",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="graph.relationtype",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(fields=["relation", "position"], name="conceptorder_position")
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("relation", "concept"), name="conceptorder_one_place"
                    )
                ],
            },
        ),
        migrations.AddField(
            model_name="edge",
            name="in_order",
            field=models.BooleanField(
                db_default=False,
                default=False,
                help_text="Written by the graph services, with its ends placed in its "
                "relation's topological order (or in a relation that needs none). A row "
                "written any other way is taken into the order by the next write of its "
                "relation.",
            ),
        ),
        migrations.AddField(
            model_name="relationtype",
            name="ordered",
            field=models.BooleanField(
                db_default=True,
                default=True,
                help_text="For an acyclic relation: whether its concepts' positions "
                "(ConceptOrder) are a topological order of its active edges. Kept by the "
                "graph services; false while its edges hold a cycle, until `manage.py "
                "order_relations` rebuilds it.",
            ),
        ),
        migrations.AddIndex(
            model_name="edge",
            index=models.Index(
                condition=models.Q(("status", "active")),
                fields=["target", "relation"],
                name="edge_active_into",
            ),
        ),
        migrations.AddIndex(
            model_name="edge",
            index=models.Index(
                condition=models.Q(("in_order", False), ("status", "active")),
                fields=["relation"],
                name="edge_out_of_order",
            ),
        ),
        migrations.RunPython(build_orders, migrations.RunPython.noop),
    ]
