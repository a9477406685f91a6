"""The dashboard's filters, read from the query string."""

from __future__ import annotations

from collections.abc import Collection

from django import forms

from .selectors.activity import DEFAULT_WINDOW, WINDOWS
from .selectors.decided import DEFAULT_TARGET

WINDOW_CHOICES = [(d, "Last 24 hours" if d == 1 else f"Last {d} days") for d in WINDOWS]
DEFAULTS = {"window": DEFAULT_WINDOW, "relation": "", "target": DEFAULT_TARGET}


class DashboardForm(forms.Form):
    """The filters; ``relation_keys`` are the keys of the relation types there are, read
    once by the caller, which also lists them."""

    window = forms.TypedChoiceField(
        choices=WINDOW_CHOICES,
        coerce=int,
        required=False,
        empty_value=DEFAULT_WINDOW,
        error_messages={
            "invalid_choice": "The window is one of "
            + ", ".join(label.lower() for _, label in WINDOW_CHOICES)
            + "; showing the last 30 days."
        },
    )
    relation = forms.CharField(required=False, max_length=64)
    target = forms.FloatField(
        required=False,
        min_value=0.01,
        max_value=1.0,
        error_messages={
            "invalid": "The target acceptance rate is a number between 0.01 and 1; showing 0.8.",
            "min_value": "The target acceptance rate is at least 0.01; showing 0.8.",
            "max_value": "The target acceptance rate is at most 1; showing 0.8.",
        },
    )

    def __init__(self, *args, relation_keys: Collection[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.relation_keys = relation_keys

    def clean_relation(self) -> str:
        key = self.cleaned_data["relation"].strip()
        if key and key not in self.relation_keys:
            raise forms.ValidationError(
                "There is no relation type with that key; showing all proposals."
            )
        return key

    def clean_target(self) -> float:
        target = self.cleaned_data["target"]
        return DEFAULT_TARGET if target is None else target

    def values(self) -> tuple[dict, list[str]]:
        """The filters to use (the default in place of each invalid one) and the errors
        in words."""
        self.is_valid()
        chosen = {**DEFAULTS}
        for name in DEFAULTS:
            if name not in self.errors and name in self.cleaned_data:
                chosen[name] = self.cleaned_data[name]
        errors = [message for field in self.errors.values() for message in field]
        return chosen, errors
