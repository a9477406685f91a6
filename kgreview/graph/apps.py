from django.apps import AppConfig


class GraphConfig(AppConfig):
    name = "kgreview.graph"
    label = "graph"
    default_auto_field = "django.db.models.BigAutoField"
