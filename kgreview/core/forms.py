"""Form fields every app's pages share.

Text typed into a page may hold NUL bytes (pasted, or sent on purpose). No database
column stores them and Django's own ``CharField`` refuses them, which leaves the field
out of ``cleaned_data``; the pages that take free text drop them instead, as they always
have, and judge what is left.
"""

from __future__ import annotations

from django import forms


class TextField(forms.CharField):
    """Free text as a page sent it, NUL bytes dropped; never required, and left unstripped
    unless asked (the services tidy spaces and say what is wrong in words)."""

    def __init__(self, *, strip: bool = False, **kwargs) -> None:
        kwargs.setdefault("required", False)
        super().__init__(strip=strip, **kwargs)

    def to_python(self, value) -> str:
        return super().to_python(value).replace("\x00", "")


def errors_in_words(form: forms.Form) -> str:
    """Every error of an invalid form as one sentence or more, for a message or a 400."""
    return " ".join(str(error) for errors in form.errors.values() for error in errors)
