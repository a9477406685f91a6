from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "kgreview.api"
    label = "api"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from kgreview.core import links

        from . import audit_actions  # noqa: F401  (registers this app's curation-log actions)

        # The explorer draws its pictures from the API's relations, and finds them by role.
        links.provide("api-relations", "api:relations")
