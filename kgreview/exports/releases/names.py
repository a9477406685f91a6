"""The rules for a release's name and its instant, in words.

A name is part of the release's address (``/releases/<name>/``) and of the folder its
files live in, so it is a slug: lower-case letters, digits, dots, hyphens and
underscores, starting and ending with a letter or digit, at most ``MAX_NAME``
characters (``2026-12``, ``v1.0``, ``spring_term``).
"""

from __future__ import annotations

import re
from datetime import datetime

from construction.text import CONTROL
from kgreview.core.errors import ValidationFailed

from ..writers.records import iso

MAX_NAME = 64
MAX_NOTES = 10_000
#: Names taken by the Releases pages' own addresses (/releases/cut/).
RESERVED = frozenset({"cut"})
NAME = re.compile(r"[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?")
SHAPE = (
    "a release name is lower-case letters, digits, dots, hyphens and underscores, "
    "starting and ending with a letter or digit, e.g. 2026-12 or v1.0"
)


def _shown(text: str) -> str:
    text = CONTROL.sub("\ufffd", text)
    return text if len(text) <= 40 else text[:37] + "..."


def name_refusal(name: object) -> str | None:
    """Why ``name`` cannot name a release, in words; None when it can."""
    if not isinstance(name, str):
        return f"Give the release's name as text: {SHAPE}."
    if not name.strip():
        return f"Give the release a name: {SHAPE}."
    if len(name) > MAX_NAME:
        return f"A release name is at most {MAX_NAME} characters; this one has {len(name):,}."
    if CONTROL.search(name):
        return (
            "A release name holds no control characters (a NUL byte or another one was "
            f"sent): {SHAPE}."
        )
    if "/" in name or "\\" in name:
        return (
            f'"{_shown(name)}" holds a path separator (/ or \\): the name is part of the '
            f"release's address and of its folder, so {SHAPE}."
        )
    if name in RESERVED:
        return f'"{name}" is a word the Releases page uses in its own addresses; pick another.'
    if not NAME.fullmatch(name):
        hint = " (use lower case)" if NAME.fullmatch(name.lower()) else ""
        return f'"{_shown(name)}" cannot name a release{hint}: {SHAPE}.'
    return None


def check_name(name: object) -> str:
    """``name`` if it can name a release; else ``ValidationFailed`` with the reason."""
    refusal = name_refusal(name)
    if refusal is not None:
        raise ValidationFailed(refusal, field="name")
    assert isinstance(name, str)
    return name


def check_notes(notes: object) -> str:
    """The curator's notes, without control characters (line breaks kept)."""
    if notes is None:
        return ""
    if not isinstance(notes, str):
        raise ValidationFailed("Give the release's notes as text.", field="notes")
    if len(notes) > MAX_NOTES:
        raise ValidationFailed(
            f"A release's notes are at most {MAX_NOTES:,} characters; these have {len(notes):,}.",
            field="notes",
        )
    return CONTROL.sub("", notes).strip()


def check_instant(
    at: datetime,
    *,
    now: datetime,
    previous: tuple[str, datetime] | None,
    first_edge: datetime | None = None,
) -> None:
    """A release freezes the graph as it was: never in the future, never before the
    release before it (``previous``: its name and instant), never before the graph held
    its first edge (``first_edge``; a release of nothing vouches for nothing)."""
    if at > now:
        raise ValidationFailed(
            f"{iso(at)} is in the future: a release vouches for the graph as it was, so "
            f"its instant is now ({iso(now)}) or earlier.",
            field="as_of",
        )
    if previous is not None and at < previous[1]:
        raise ValidationFailed(
            f'{iso(at)} is before release "{previous[0]}" (as of {iso(previous[1])}): '
            "releases follow each other in time, and each one's notes are the changes "
            f"since the one before. Give an instant at or after {iso(previous[1])}.",
            field="as_of",
        )
    if first_edge is not None and at < first_edge:
        raise ValidationFailed(
            f"{iso(at)} is before the graph's first edge (recorded {iso(first_edge)}): a "
            "release of that instant would hold no edges. Give an instant at or after "
            f"{iso(first_edge)}, or leave it empty for now.",
            field="as_of",
        )
