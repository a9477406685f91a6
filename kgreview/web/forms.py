"""Inputs of the pages that combine apps, read through forms."""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model

from kgreview.core import audit
from kgreview.core.forms import InstantField
from kgreview.graph.forms import RevisionForm


class SourcePageForm(RevisionForm):
    """``?rev=N`` plus a place to jump to: ``?at=OFFSET`` (a quote, else its page or
    section) or ``?page=N``. A place that is not a number is ignored."""

    at = forms.IntegerField(required=False)
    page = forms.IntegerField(required=False)

    def wants_place(self) -> bool:
        return "at" in self.data or "page" in self.data

    def place(self) -> tuple[str | None, str | None]:
        """The offset and the page asked for, each None when missing or not a number."""
        self.is_valid()
        at, page = self.cleaned_data.get("at"), self.cleaned_data.get("page")
        return (None if at is None else str(at)), (None if page is None else str(page))


class CurationLogForm(forms.Form):
    """The curation log's filters (one kind of change, one person, both or neither) and
    the page to show."""

    action = forms.ChoiceField(required=False, label="Change")
    user = forms.ChoiceField(required=False, label="Who")
    page = forms.IntegerField(required=False, min_value=1)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["action"].choices = [("", "any change")] + [
            (a.name, a.words) for a in audit.actions()
        ]
        people = (
            get_user_model()
            .objects.filter(audit_entries__isnull=False)
            .distinct()
            .order_by("username")
            .values_list("username", flat=True)
        )
        self.fields["user"].choices = [("", "anyone")] + [(u, u) for u in people]

    def filters(self) -> dict[str, str]:
        """The filters that hold a known value; an unknown one is dropped (and reported
        by ``problems``)."""
        self.is_valid()
        return {k: self.cleaned_data[k] for k in ("action", "user") if self.cleaned_data.get(k)}

    def page_number(self) -> int:
        self.is_valid()
        return self.cleaned_data.get("page") or 1

    def problems(self) -> list[str]:
        """Each unusable filter, in words."""
        self.is_valid()
        words = {
            "action": "No change {!r} in the log; showing every change.",
            "user": "Nobody called {!r} changed anything; showing everyone.",
            "page": "{!r} is not a page number; showing the first page.",
        }
        return [words[name].format(self.data.get(name)) for name in self.errors]


class VocabularyImportForm(forms.Form):
    """A vocabulary file to import, the SKOS relations mapped, its syntax and language."""

    file = forms.FileField(
        error_messages={
            "required": "Choose a vocabulary file (Turtle, RDF/XML, N-Triples or JSON-LD).",
            "empty": "The file is empty.",
        }
    )
    map = forms.CharField(required=False, max_length=500)
    syntax = forms.ChoiceField(
        required=False,
        choices=[
            ("", "from the file name"),
            ("turtle", "Turtle"),
            ("xml", "RDF/XML"),
            ("nt", "N-Triples"),
            ("json-ld", "JSON-LD"),
        ],
    )
    lang = forms.RegexField(
        required=False,
        regex=r"^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$",
        max_length=35,
        error_messages={"invalid": "The language is a tag such as en or de."},
    )

    def problem(self) -> str:
        """The form's first error, in words."""
        for errors in self.errors.values():
            return str(errors[0])
        return ""


class ConceptPageForm(forms.Form):
    """``?as_of=`` on a concept's page: the instant its attributes are read at (ISO 8601;
    empty for now). Text that is no instant is refused in words."""

    as_of = InstantField()
