import logging

from django.apps import AppConfig


def requeue_dropped_on_accept(sender, *, key: str, **kwargs) -> None:
    """A relation type was accepted: verify again the candidates dropped for lacking it."""
    from .tasks import requeue_dropped

    try:
        requeue_dropped.delay(relation_key=key)
    except Exception:  # the broker is down: the next discovery run requeues them instead
        logging.getLogger(__name__).exception("could not queue the requeue of %s", key)


def release_holds_on_accept(sender, *, relation_keys=None, **kwargs) -> None:
    """A pattern or a type was accepted: let go the candidates held for breaking a
    relation's pattern that fit now."""
    from .tasks import release_pattern_holds

    try:
        release_pattern_holds.delay(relation_keys=relation_keys)
    except Exception:  # the broker is down: the next acceptance asks them again
        logging.getLogger(__name__).exception("could not queue the release of pattern holds")


def type_concepts_on_accept(sender, *, type_key: str | None = None, **kwargs) -> None:
    """A concept type was accepted: propose it for the untyped concepts it fits."""
    if not type_key:
        return
    from .tasks import type_concepts

    try:
        type_concepts.delay(type_key=type_key)
    except Exception:  # the broker is down: the type stays accepted; construct types later
        logging.getLogger(__name__).exception("could not queue the typing for %s", type_key)


class AgentsConfig(AppConfig):
    name = "kgreview.agents"
    label = "agents"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from kgreview.review.signals import ontology_accepted, relation_type_accepted

        from . import audit_actions  # noqa: F401  (registers this app's curation-log actions)

        relation_type_accepted.connect(requeue_dropped_on_accept, dispatch_uid="agents.requeue")
        ontology_accepted.connect(release_holds_on_accept, dispatch_uid="agents.release_holds")
        ontology_accepted.connect(type_concepts_on_accept, dispatch_uid="agents.type_concepts")
