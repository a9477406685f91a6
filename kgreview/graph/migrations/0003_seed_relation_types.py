"""The starting vocabulary: six relation types a curator can later extend or retire."""

from django.db import migrations

RELATIONS = [
    (
        "prerequisite",
        "Prerequisite",
        "is a prerequisite for",
        True,
        False,
        True,
        "The source must be understood before the target can be learned.",
    ),
    (
        "builds_on",
        "Builds on",
        "builds on",
        True,
        False,
        True,
        "The source extends or is constructed on top of the target.",
    ),
    (
        "part_of",
        "Part of",
        "is part of",
        True,
        False,
        True,
        "The source is a component, stage or member of the target.",
    ),
    (
        "contrasts_with",
        "Contrasts with",
        "contrasts with",
        False,
        True,
        False,
        "The two are alternatives or differ in an instructive way.",
    ),
    (
        "applies_to",
        "Applies to",
        "applies to",
        True,
        False,
        False,
        "The source is used for, or applied to, the target.",
    ),
    (
        "related",
        "Related",
        "is related to",
        False,
        True,
        False,
        "The two are connected in a way none of the other relations names.",
    ),
]


def seed(apps, schema_editor):
    RelationType = apps.get_model("graph", "RelationType")
    for key, label, verb, directed, symmetric, acyclic, description in RELATIONS:
        RelationType.objects.update_or_create(
            key=key,
            defaults={
                "label": label,
                "verb": verb,
                "directed": directed,
                "symmetric": symmetric,
                "acyclic": acyclic,
                "description": description,
                "active": True,
            },
        )


class Migration(migrations.Migration):
    dependencies = [("graph", "0002_initial")]
    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
