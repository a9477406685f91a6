from django.apps import AppConfig


class ExportsConfig(AppConfig):
    name = "kgreview.exports"
    label = "exports"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from kgreview.agents.signals import reaper_pass

        from . import audit_actions  # noqa: F401  (registers this app's curation-log actions)
        from .releases import api_routes
        from .tasks import sweep_release_builds

        # Every reaper pass (beat's, and each worker's thread) also sweeps release builds
        # whose worker died or whose task message was lost.
        reaper_pass.connect(sweep_release_builds, dispatch_uid="exports.sweep_release_builds")

        # The API serves releases too; it finds this app's operations through core.
        api_routes.provide()
