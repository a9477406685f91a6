"""The three roles as groups with model permissions.

viewer reads; reviewer also decides proposals; curator also shapes the ontology,
merges concepts, schedules agents and uses the admin.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

APPS = ["graph", "review", "agents", "django_celery_beat"]
READ = {
    "graph": [
        "relationtype",
        "concept",
        "conceptalias",
        "source",
        "sourcerevision",
        "sourceconcept",
        "edge",
    ],
    "review": ["proposal", "decision"],
    "agents": ["agentrun", "workerheartbeat"],
}
REVIEWER = [("review", "change_proposal"), ("review", "add_decision")]
CURATOR = [
    ("graph", "add_relationtype"),
    ("graph", "change_relationtype"),
    ("graph", "add_concept"),
    ("graph", "change_concept"),
    ("graph", "add_conceptalias"),
    ("agents", "add_agentrun"),
    ("agents", "change_agentrun"),
    ("django_celery_beat", "view_periodictask"),
    ("django_celery_beat", "add_periodictask"),
    ("django_celery_beat", "change_periodictask"),
    ("django_celery_beat", "view_intervalschedule"),
    ("django_celery_beat", "add_intervalschedule"),
    ("django_celery_beat", "view_crontabschedule"),
    ("django_celery_beat", "add_crontabschedule"),
]


def forwards(apps, schema_editor):
    # Permissions are normally created after migrate; groups need them now.
    for label in APPS:
        config = apps.get_app_config(label)
        original = getattr(config, "models_module", None)
        config.models_module = original or True  # historical app configs have none
        create_permissions(config, apps=apps, verbosity=0)
        config.models_module = original
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")

    def perms(pairs):
        found = []
        for app_label, codename in pairs:
            found.append(
                Permission.objects.get(content_type__app_label=app_label, codename=codename)
            )
        return found

    read = [(app, f"view_{model}") for app, models in READ.items() for model in models]
    viewer, _ = Group.objects.get_or_create(name="viewer")
    viewer.permissions.set(perms(read))
    reviewer, _ = Group.objects.get_or_create(name="reviewer")
    reviewer.permissions.set(perms(read + REVIEWER))
    curator, _ = Group.objects.get_or_create(name="curator")
    curator.permissions.set(perms(read + REVIEWER + CURATOR))


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("review", "0001_initial"),
        ("graph", "0004_forbid_delete_triggers"),
        ("agents", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
