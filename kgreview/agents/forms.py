"""The Agents page's forms: what Run now and a schedule toggle read from a POST."""

from __future__ import annotations

from django import forms


class RunNowForm(forms.Form):
    """Run now's one option: which sources construction reads (other agents ignore it)."""

    SCOPES = [("new", "Sources not read yet"), ("all", "Every source, again")]

    scope = forms.ChoiceField(
        choices=SCOPES,
        required=False,
        error_messages={
            "invalid_choice": (
                "“%(value)s” is not a choice of sources: read the new ones (new) or all of "
                "them again (all)."
            )
        },
    )

    def clean_scope(self) -> str:
        return self.cleaned_data["scope"] or "new"


class ResumeFlag(forms.Field):
    """True only for "1": resuming must be asked for exactly; any other value, or none,
    pauses rather than guesses."""

    def to_python(self, value) -> bool:
        return value == "1"


class ScheduleToggleForm(forms.Form):
    enabled = ResumeFlag(required=False)


class BootstrapForm(forms.Form):
    """The Ontology page's bootstrap: how many chunks of each document to read (empty: the
    default; 0: every chunk)."""

    sample_chunks = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=1000,
        error_messages={
            "min_value": "Chunks per document must be at least 0 (0 reads every chunk).",
            "max_value": "Chunks per document must be at most 1000 (0 reads every chunk).",
            "invalid": "Chunks per document must be a whole number (0 reads every chunk).",
        },
    )
