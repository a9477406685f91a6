"""A proposal no longer names the agent run that queued it: review sits below the agents.
Its origin (0015) says who proposed it; the agents' migration 0008 has filled the
origins before this one drops the column (``run_before``), and fills the column back from
them when reversed."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("review", "0015_proposal_origin")]

    operations = [migrations.RemoveField(model_name="proposal", name="agent_run")]
