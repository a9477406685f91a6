"""The agents' default schedules; curators change or pause them (admin or the Agents page)."""

import json

from django.db import migrations

SCHEDULES = [
    (
        "Construct: new or changed sources",
        "agents.construct_scheduled",
        {"minute": "0", "hour": "*", "day_of_week": "*"},
        "Every hour: read the sources whose current revision no agent has read yet.",
    ),
    (
        "Heal the graph",
        "agents.heal",
        {"minute": "0", "hour": "3", "day_of_week": "*"},
        "Every night: duplicate concepts, cycles, evidence that vanished, orphans.",
    ),
    (
        "Discover relation types",
        "agents.discover",
        {"minute": "0", "hour": "4", "day_of_week": "0"},
        "Every Sunday: relations the vocabulary lacks that lessons keep stating.",
    ),
]


def create(apps, schema_editor):
    Crontab = apps.get_model("django_celery_beat", "CrontabSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    for name, task, cron, description in SCHEDULES:
        crontab, _ = Crontab.objects.get_or_create(
            day_of_month="*", month_of_year="*", timezone="UTC", **cron
        )
        PeriodicTask.objects.get_or_create(
            name=name,
            defaults={
                "task": task,
                "crontab": crontab,
                "kwargs": json.dumps({}),
                "enabled": True,
                "description": description,
            },
        )


def remove(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name__in=[s[0] for s in SCHEDULES]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0003_dropped_requeue"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]
    operations = [migrations.RunPython(create, remove)]
