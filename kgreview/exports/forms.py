"""The export form: a format and an optional instant."""

from __future__ import annotations

from django import forms

from kgreview.core.errors import ValidationFailed
from kgreview.core.instants import parse_instant

from .writers import FORMATS


class ExportForm(forms.Form):
    format = forms.ChoiceField(
        choices=[(f.key, f.label) for f in FORMATS.values()],
        initial="jsonld",
        widget=forms.RadioSelect,
        error_messages={"invalid_choice": "Choose one of the formats: JSON-LD, CSV or GraphML."},
    )
    as_of = forms.CharField(
        required=False,
        label="As of",
        max_length=100,
        widget=forms.DateTimeInput(attrs={"type": "datetime-local", "step": "1"}),
        help_text="Leave empty for the graph as it is now.",
    )

    def clean_as_of(self):
        value = self.cleaned_data["as_of"].strip()
        if not value:
            return None
        try:
            return parse_instant(value)
        except ValidationFailed as exc:
            raise forms.ValidationError(str(exc)) from None
