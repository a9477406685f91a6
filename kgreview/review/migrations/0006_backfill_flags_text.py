"""Fill the filterable copy of each proposal's flags for rows written before it existed."""

from django.db import migrations


def backfill(apps, schema_editor):
    Proposal = apps.get_model("review", "Proposal")
    batch = []
    for proposal in Proposal.objects.only("id", "flags").iterator(chunk_size=2000):
        flags = sorted(set(proposal.flags or []))
        proposal.flags_text = ("|" + "|".join(flags) + "|") if flags else ""
        batch.append(proposal)
        if len(batch) >= 2000:
            Proposal.objects.bulk_update(batch, ["flags_text"])
            batch = []
    if batch:
        Proposal.objects.bulk_update(batch, ["flags_text"])


class Migration(migrations.Migration):
    dependencies = [("review", "0005_review_workspace")]
    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
