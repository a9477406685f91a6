"""On PostgreSQL, source–concept links cannot be deleted by raw SQL either: they record
where a concept came from. (Aliases got their trigger in 0007; SQLite gets the same
triggers after every migrate.)
"""

from django.db import migrations

from kgreview.core.nodelete import history_triggers


class Migration(migrations.Migration):
    dependencies = [("graph", "0009_documents")]
    operations = [history_triggers(["graph.SourceConcept"])]
