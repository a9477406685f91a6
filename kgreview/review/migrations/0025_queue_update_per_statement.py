"""The Queue's update trigger runs once per statement over the rows it changed, instead
of once per row (``review.queue_index``): closing a thousand proposals in one UPDATE ran
its statements a thousand times (85-110 ms of a bulk accept at a million proposals).
Reversed, the row trigger of 0012 is not put back: the statement trigger keeps the same
rows, so nothing is lost either way."""

from django.db import migrations

from kgreview.review import queue_index


def forwards(apps, schema_editor):
    queue_index.install_triggers(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [("review", "0024_talk")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
