from django.apps import AppConfig


class GraphConfig(AppConfig):
    name = "kgreview.graph"
    label = "graph"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import audit_actions  # noqa: F401  (registers this app's curation-log actions)
