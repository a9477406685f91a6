"""On PostgreSQL, competency questions, their runs and results cannot be deleted by raw
SQL; results cannot be changed either. (SQLite gets the same triggers after every migrate.)
"""

from django.db import migrations

from kgreview.core.nodelete import history_triggers


class Migration(migrations.Migration):
    dependencies = [("questions", "0001_initial"), ("core", "0002_audit_append_only")]
    operations = [
        history_triggers(
            [
                "questions.CompetencyQuestion",
                "questions.CompetencyRun",
                "questions.QuestionResult",
            ],
            no_update=("questions.QuestionResult",),
        )
    ]
