import logging

from django.apps import AppConfig


def requeue_dropped_on_accept(sender, *, key: str, **kwargs) -> None:
    """A relation type was accepted: verify again the candidates dropped for lacking it."""
    from .tasks import requeue_dropped

    try:
        requeue_dropped.delay(relation_key=key)
    except Exception:  # the broker is down: the next discovery run requeues them instead
        logging.getLogger(__name__).exception("could not queue the requeue of %s", key)


class AgentsConfig(AppConfig):
    name = "kgreview.agents"
    label = "agents"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from kgreview.review.signals import relation_type_accepted

        from . import audit_actions  # noqa: F401  (registers this app's curation-log actions)

        relation_type_accepted.connect(requeue_dropped_on_accept, dispatch_uid="agents.requeue")
