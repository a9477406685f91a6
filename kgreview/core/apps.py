from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "kgreview.core"
    label = "core"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "Audit"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from .nodelete import connect_guards, install_sqlite_guards_after_migrate

        # Every model is loaded by now: refuse deletes of history on every ORM path,
        # and on SQLite put the triggers back after each migrate.
        connect_guards()
        post_migrate.connect(
            install_sqlite_guards_after_migrate,
            sender=self,
            dispatch_uid="kgreview.nodelete:sqlite_triggers",
        )
