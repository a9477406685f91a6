"""The changes page's form: the window between two instants, read in words."""

from __future__ import annotations

from datetime import datetime, timedelta

from django import forms

from kgreview.core import instants
from kgreview.core.errors import ValidationFailed

# Without "since", the window is the week before "until".
DEFAULT_WINDOW = timedelta(days=7)


def _instant(value: str, *, field: str) -> datetime:
    """A ``datetime-local`` value (or any ISO 8601 time), read by the project's one
    parser; naive times are in the server's time zone."""
    try:
        return instants.parse_instant(value)
    except ValidationFailed:
        raise forms.ValidationError(
            f'"{value[:40]}" is not a date and time for {field}; '
            "use the picker or write it as 2025-01-31T14:30."
        ) from None


class ChangesForm(forms.Form):
    """``since`` and ``until``, both optional: ``until`` defaults to ``now``, ``since`` to a
    week before ``until``. One error at a time, the first met in that order, so the page
    says one thing to fix. ``window`` holds the instants read so far, even after an
    error, so the boxes can show what the page is answering for."""

    since = forms.CharField(required=False)
    until = forms.CharField(required=False)

    def __init__(self, data, *, now: datetime) -> None:
        super().__init__(data)
        self.now = now
        self.window: tuple[datetime | None, datetime | None] = (None, None)

    def clean(self):
        if self.errors:  # a box the fields refused (a null character): nothing to read
            return self.cleaned_data
        raw_since = self.cleaned_data["since"]
        raw_until = self.cleaned_data["until"]
        until = _instant(raw_until, field="until") if raw_until else self.now
        self.window = (None, until)
        if raw_since:
            since = _instant(raw_since, field="since")
        else:
            try:
                since = until - DEFAULT_WINDOW
            except OverflowError:
                raise forms.ValidationError(
                    "There is no week before “until”: give “since” as well."
                ) from None
        self.window = (since, until)
        if since > until:
            raise forms.ValidationError(
                "“Since” is after “until”: the window runs backwards. Swap the two dates."
            )
        return self.cleaned_data

    def error_in_words(self) -> str:
        """The one error to show (a box's own first, "until" before "since"), or "" when
        the window reads."""
        for errors in (self.errors.get("until"), self.errors.get("since"), self.non_field_errors()):
            if errors:
                return errors[0]
        return ""


class AskForm(forms.Form):
    """A question in words and, optionally, the instant to answer for. The question's
    length and emptiness are the service's to judge (``graph.asking.clean_question``)."""

    q = forms.CharField(required=False, strip=True)
    as_of = forms.CharField(required=False)

    def clean_as_of(self):
        raw = self.cleaned_data["as_of"]
        return _instant(raw, field="as of") if raw else None
