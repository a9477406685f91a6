"""Form fields every app's pages share.

Text typed into a page may hold NUL bytes and other control characters (pasted, or sent
on purpose). A request carrying one never reaches a form: ``core.middleware`` answers it
with a 400 in words. A form bound to data from elsewhere (a test, a command, a view that
reads its own body) still gets no control character past ``TextField``, which drops them
(the same set, ``construction.text.CONTROL``) and judges what is left.
"""

from __future__ import annotations

import math
import re

from django import forms

from construction.text import without_controls

from .errors import ValidationFailed
from .instants import parse_instant


class TextField(forms.CharField):
    """Free text as a page sent it, control characters dropped; never required, and left
    unstripped unless asked (the services tidy spaces and say what is wrong in words)."""

    def __init__(self, *, strip: bool = False, **kwargs) -> None:
        kwargs.setdefault("required", False)
        super().__init__(strip=strip, **kwargs)

    def to_python(self, value) -> str:
        return without_controls(super().to_python(value) or "")


class InstantField(forms.CharField):
    """An instant typed in a page (ISO 8601, read by ``core.instants.parse_instant``; a
    naive one in the server's time zone), or ``None`` when left empty. Text that is no
    instant is refused in the parser's words."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("max_length", 100)
        super().__init__(**kwargs)

    def clean(self, value):
        text = super().clean(value).strip()
        if not text:
            return None
        try:
            return parse_instant(text)
        except ValidationFailed as exc:
            raise forms.ValidationError(str(exc)) from None


# The largest integer a database column holds (a signed 64-bit one). A bigger number names
# no row, and SQLite cannot even be asked about it ("Python int too large to convert").
BIGGEST_INT = 2**63 - 1
_INTEGER = re.compile(r"[+-]?[0-9]{1,19}")


def parse_int(value, *, low: int = -BIGGEST_INT, high: int = BIGGEST_INT) -> int | None:
    """An integer typed or sent by a page, between ``low`` and ``high``; None otherwise.
    Only ASCII digits count ("²" and "١" are digits to ``str.isdigit`` but not to ``int``)."""
    text = str(value if value is not None else "").strip()
    if not _INTEGER.fullmatch(text):
        return None
    number = int(text)
    return number if low <= number <= high else None


def parse_row_id(value) -> int | None:
    """A row id (1 to ``BIGGEST_INT``) typed or sent by a page; None when it is not one."""
    return parse_int(value, low=1)


def parse_finite(value) -> float | None:
    """A finite number typed or sent by a page ("1e400", "inf" and "nan" are not); None
    when it is not one."""
    try:
        number = float(str(value if value is not None else "").strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None


class RowIdField(forms.IntegerField):
    """A row id: 1 to ``BIGGEST_INT``, refused in words outside that."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", BIGGEST_INT)
        super().__init__(**kwargs)


def errors_in_words(form: forms.Form) -> str:
    """Every error of an invalid form as one sentence or more, for a message or a 400."""
    return " ".join(str(error) for errors in form.errors.values() for error in errors)
