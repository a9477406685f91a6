"""A proposal no longer names the competency question that asked for it: review sits
below the questions app. The link moved to ``questions.GapProposal``, whose migration
(questions 0003) copies every link over before this one drops the column, and copies
them back if this one is reversed."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("review", "0013_add_alias")]

    operations = [migrations.RemoveField(model_name="proposal", name="competency_question")]
