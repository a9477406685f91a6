from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "kgreview.review"
    label = "review"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_out
        from django.db.models.signals import post_migrate

        from kgreview.review import audit_actions  # noqa: F401  (registers this app's curation-log actions)
        from kgreview.review.queue_index import install_triggers_after_migrate

        # SQLite drops a table's triggers when a migration rebuilds it: put the queue's
        # back after every migrate (PostgreSQL keeps the ones its migration installed).
        post_migrate.connect(
            install_triggers_after_migrate,
            sender=self,
            dispatch_uid="kgreview.review:queue_triggers",
        )
        user_logged_out.connect(
            _release_leases, dispatch_uid="kgreview.review:release_leases_on_logout"
        )


def _release_leases(sender, request, user, **kwargs) -> None:
    """Logging out gives up the cards the focus queue leased the reviewer."""
    if user is not None and user.is_authenticated:
        from kgreview.review.team import leases

        leases.release_all(user)
