"""Merge and edge proposals name what they touch: loser/survivor, or the edge's ends."""

from django.db import migrations


def _backfill(apps, schema_editor):
    Proposal = apps.get_model("review", "Proposal")
    Concept = apps.get_model("graph", "Concept")
    Edge = apps.get_model("graph", "Edge")
    concepts = set(Concept.objects.values_list("pk", flat=True))
    batch = []
    rows = Proposal.objects.filter(
        kind__in=("merge_concepts", "invalidate_edge", "update_edge"), source_concept__isnull=True
    ).only("id", "kind", "payload")
    for p in rows.iterator(2000):
        if p.kind == "merge_concepts":
            loser, survivor = p.payload.get("loser_id"), p.payload.get("survivor_id")
            if loser in concepts and survivor in concepts:
                p.source_concept_id, p.target_concept_id = loser, survivor
                batch.append(p)
        else:
            edge = (
                Edge.objects.filter(pk=p.payload.get("edge_id"))
                .values_list("source_id", "target_id", "relation_id")
                .first()
            )
            if edge:
                p.source_concept_id, p.target_concept_id, p.relation_id = edge
                batch.append(p)
        if len(batch) >= 2000:
            Proposal.objects.bulk_update(batch, ["source_concept", "target_concept", "relation"])
            batch = []
    if batch:
        Proposal.objects.bulk_update(batch, ["source_concept", "target_concept", "relation"])


class Migration(migrations.Migration):
    dependencies = [("review", "0008_open_queue_indexes")]

    operations = [migrations.RunPython(_backfill, migrations.RunPython.noop)]
