from django.apps import AppConfig


class QuestionsConfig(AppConfig):
    name = "kgreview.questions"
    label = "questions"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "Competency questions"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from kgreview.core import links

        from . import audit_actions  # noqa: F401  (registers this app's curation-log actions)
        from .schedule import schedule_sync_after_migrate

        # The agents' page links to the questions, and the focus card to the question
        # that asked for a proposal, without naming this app's pages.
        links.provide("questions", "questions:home")
        links.provide("question", "questions:detail")
        _card_shows_the_question()
        post_migrate.connect(
            schedule_sync_after_migrate, sender=self, dispatch_uid="questions.schedule"
        )


def _card_shows_the_question() -> None:
    """Every review card's query carries the competency question that asked for its
    proposal, if one did (``question_id``, ``question_text``): the focus card names it."""
    from django.db.models import OuterRef, Subquery

    from kgreview.review.workspace.selectors import card_annotation

    from .models import GapProposal

    def asking(column: str):
        return lambda: Subquery(
            GapProposal.objects.filter(proposal_id=OuterRef("pk")).values(column)[:1]
        )

    card_annotation("question_id", asking("question_id"))
    card_annotation("question_text", asking("question__text"))
