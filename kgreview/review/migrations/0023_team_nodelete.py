"""On PostgreSQL, reviewers' votes and curators' assignments cannot be deleted by raw SQL
either. (SQLite gets the same triggers after every migrate.)
"""

from django.db import migrations

from kgreview.core.nodelete import history_triggers


class Migration(migrations.Migration):
    dependencies = [("review", "0022_team_review"), ("core", "0002_audit_append_only")]
    operations = [history_triggers(["review.Vote", "review.Assignment"])]
