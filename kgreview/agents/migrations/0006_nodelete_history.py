"""On PostgreSQL, what runs did and read cannot be deleted by raw SQL; paid chunk
readings cannot be changed either. (SQLite gets the same triggers after every migrate.)
"""

from django.db import migrations

from kgreview.core.nodelete import history_triggers


class Migration(migrations.Migration):
    dependencies = [("agents", "0005_documents"), ("core", "0002_audit_append_only")]
    operations = [
        history_triggers(
            [
                "agents.AgentRunItem",
                "agents.ExtractionRecord",
                "agents.ChunkExtraction",
                "agents.DroppedCandidate",
            ],
            no_update=("agents.ChunkExtraction",),
        )
    ]
