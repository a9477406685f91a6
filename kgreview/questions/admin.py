"""Admin for competency questions: read-only rows; retire / reactivate go through the
services (audited). Questions are added and edited on the Questions page."""

from django.contrib import admin, messages

from kgreview.core.admin import ReadOnlyAdmin
from kgreview.core.errors import DomainError

from . import services
from .models import CompetencyQuestion, CompetencyRun, QuestionResult


@admin.register(CompetencyQuestion)
class CompetencyQuestionAdmin(ReadOnlyAdmin):
    list_display = ("id", "text", "expect", "active", "created_by", "created_at")
    list_filter = ("active", "expect")
    search_fields = ("text", "note")
    actions = ("retire", "reactivate")

    @admin.action(description="Retire selected questions (their history stays)")
    def retire(self, request, queryset):
        self._apply(request, queryset, services.question_retire, "retired")

    @admin.action(description="Reactivate selected questions")
    def reactivate(self, request, queryset):
        self._apply(request, queryset, services.question_reactivate, "reactivated")

    def _apply(self, request, queryset, service, verb):
        done = 0
        for question in queryset:
            try:
                service(question_id=question.pk, acting_user=request.user)
                done += 1
            except DomainError as exc:
                self.message_user(request, str(exc), messages.WARNING)
        if done:
            self.message_user(request, f"{done} question(s) {verb}.", messages.SUCCESS)


@admin.register(CompetencyRun)
class CompetencyRunAdmin(ReadOnlyAdmin):
    list_display = ("id", "trigger", "status", "total", "passed", "failed", "created_at")
    list_filter = ("status", "trigger")


@admin.register(QuestionResult)
class QuestionResultAdmin(ReadOnlyAdmin):
    list_display = ("id", "run", "question", "passed", "status", "latency_ms", "graph_at")
    list_filter = ("passed", "status")
