"""The forms the review pages read people's input through.

Each form cleans what a page sends (numbers, ids, dates, text) and says what is wrong in
words. Values the services judge themselves (a reject reason, a relation key) pass
through as text, so the refusal a person sees is the service's, as before.
"""

from __future__ import annotations

import uuid
from datetime import date

from django import forms

from kgreview.core.forms import TextField, parse_finite, parse_int, parse_row_id
from kgreview.review.decide.ends import EndChoice
from kgreview.review.payloads import DESCRIPTION_MAX, NAME_MAX, WEIGHT_MAX


def clean_text(value, limit: int = 2000) -> str:
    """Form text as stored: NUL bytes dropped, runs of whitespace one space, capped."""
    return " ".join(str(value or "").replace("\x00", "").split())[:limit]


def parse_float(value: str | None) -> float | None:
    """A typed number (None when left empty); ``ValueError`` when it is not a finite one."""
    if value is None or not value.strip():
        return None
    number = parse_finite(value)
    if number is None:
        raise ValueError(value)
    return number


def parse_id(value: str | None) -> int | None:
    """A row id typed or sent by a page; None when it is not one."""
    return parse_row_id(value)


def end_choice(source, role: str) -> EndChoice | None:
    """One end of an edge as the concept picker sent it (None: left as it was)."""
    concept_id = parse_id(source.get(f"{role}_concept_id"))
    proposal_id = parse_id(source.get(f"{role}_proposal_id"))
    name = clean_text(source.get(f"{role}_name", ""), 300)
    if not (concept_id or proposal_id or name):
        return None
    return EndChoice(
        concept_id=concept_id,
        proposal_id=proposal_id,
        name=name or None,
        create=source.get(f"{role}_create") == "1",
    )


class IdField(TextField):
    """A row id; anything else reads as none given."""

    def to_python(self, value) -> int | None:
        return parse_id(super().to_python(value))


TRAIL_MAX = 50


class TrailField(TextField):
    """The cards a reviewer saw before the current one, oldest first (for Previous): ids
    separated by commas, the last ``TRAIL_MAX`` kept; what is not an id is left out."""

    def to_python(self, value) -> list[int]:
        ids = [parse_id(part) for part in super().to_python(value).split(",")]
        return [i for i in ids if i is not None][-TRAIL_MAX:]


class TrailForm(forms.Form):
    trail = TrailField()


VERSION_UNREADABLE = (
    "The version of the card you decided on could not be read: nothing was decided. "
    "Reload the card and decide again."
)
BATCH_UNREADABLE = "Which decisions to undo could not be read: nothing was undone."


class DecisionForm(forms.Form):
    """What every decision form sends: the version the reviewer saw, a note, and where in
    the queue they were (``cursor``)."""

    version = TextField(strip=True)
    note = TextField()
    cursor = TextField()

    def clean_version(self) -> int | None:
        """None when the page sent no version (nothing to compare); a version that was
        sent but cannot be read is refused, never taken as "none"."""
        raw = self.cleaned_data["version"]
        if raw == "":
            return None
        version = parse_int(raw, low=0, high=2**31 - 1)
        if version is None:
            raise forms.ValidationError(VERSION_UNREADABLE)
        return version

    def error_words(self) -> str:
        """Every error of the form, in its words (the form-wide ones first)."""
        words = list(self.non_field_errors())
        words += [e for name, errs in self.errors.items() if name != "__all__" for e in errs]
        return " ".join(words)

    def typed_values(self) -> dict:
        """What the reviewer typed, to show it again after a refusal."""
        return {"note": self.data.get("note", "")}


class AcceptForm(DecisionForm):
    survivor = IdField()  # a merge: the concept to keep
    over_conflicts = forms.BooleanField(required=False)
    widen = forms.BooleanField(required=False)  # a curator widens the relation's pattern


class RejectForm(DecisionForm):
    reason_code = TextField()


class EdgeEditForm(DecisionForm):
    """An edge's corrections before accepting (``AddEdgeKind.edit_form``); the ends come
    from the concept picker."""

    relation = TextField()
    swap = forms.BooleanField(required=False)
    confidence = TextField()
    weight = TextField()

    def clean(self):
        data = super().clean()
        # Each refusal on its field, so the card can put the reviewer back in it.
        for name in ("confidence", "weight"):
            try:
                data[name] = parse_float(data.get(name))
            except ValueError:
                self.add_error(name, "Confidence and weight must be numbers.")
                return data
        if data["weight"] is not None and not 0.0 <= data["weight"] <= WEIGHT_MAX:
            self.add_error("weight", f"Weight must lie between 0 and {WEIGHT_MAX:g}.")
            return data
        data["source"] = end_choice(self.data, "source")
        data["target"] = end_choice(self.data, "target")
        return data

    def typed_values(self) -> dict:
        keys = ("relation", "confidence", "weight", "note", "swap")
        roles = ("name", "concept_id", "proposal_id", "create")
        values = {k: self.data.get(k, "") for k in keys}
        for role in ("source", "target"):
            values[role] = {r: self.data.get(f"{role}_{r}", "") for r in roles}
        return values


class ConceptEditForm(DecisionForm):
    """A new concept's corrections before accepting (``AddConceptKind.edit_form``): its
    name, its type and its description. A field the page did not send is kept as drafted
    (None); an empty type means none."""

    name = TextField(strip=True)
    type_key = TextField(strip=True)
    description = TextField(strip=True)
    confidence = TextField()

    def clean(self):
        data = super().clean()
        if len(data.get("name", "")) > NAME_MAX:
            raise forms.ValidationError(f"A concept's name is at most {NAME_MAX} characters.")
        if len(data.get("description", "")) > DESCRIPTION_MAX:
            raise forms.ValidationError(
                f"A concept's description is at most {DESCRIPTION_MAX} characters."
            )
        for sent in ("type_key", "description"):
            if sent not in self.data:
                data[sent] = None
        try:
            data["confidence"] = parse_float(data.get("confidence"))
        except ValueError:
            raise forms.ValidationError("Confidence must be a number.") from None
        return data

    def typed_values(self) -> dict:
        keys = ("name", "type_key", "description", "confidence", "note")
        return {k: self.data.get(k, "") for k in keys}


class ConceptSearchForm(forms.Form):
    """A name typed in the concept picker, and which end it is for."""

    role = TextField(strip=True)
    q = TextField()
    only = TextField(strip=True)

    def clean(self):
        data = super().clean()
        role = data.get("role") if data.get("role") in ("source", "target") else "target"
        data["role"] = role
        raw = data.get("q") or self.data.get(f"{role}_name") or ""
        data["q"] = clean_text(raw, 100)
        return data


class DecisionLogForm(forms.Form):
    """Who and when, for the decision log; a date it cannot read is reported in words."""

    reviewer = TextField(strip=True)
    since = TextField(strip=True)
    until = TextField(strip=True)

    def _day(self, name: str) -> date | None:
        raw = self.cleaned_data[name]
        if not raw:
            return None
        try:
            return date.fromisoformat(raw)
        except ValueError:
            raise forms.ValidationError(f"{raw!r} is not a date (use YYYY-MM-DD).") from None

    def clean_since(self) -> date | None:
        return self._day("since")

    def clean_until(self) -> date | None:
        return self._day("until")

    def error_words(self) -> list[str]:
        return [e for name in ("since", "until") for e in self.errors.get(name, [])]


class UndoForm(forms.Form):
    """The batch to undo; none means the reviewer's latest (one unreadable is refused). ``from``
    says which page asked (``queue`` goes back to the queue, else to the card)."""

    batch = TextField()
    trail = TrailField()

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["from"] = TextField()  # a Python keyword, so not a class attribute

    def back_to_queue(self) -> bool:
        return self.cleaned_data.get("from") == "queue"

    def clean_batch(self) -> uuid.UUID | None:
        """None when no batch was sent (the reviewer's latest); a batch that was sent but
        cannot be read is refused, never taken for the latest."""
        raw = self.cleaned_data["batch"].strip()
        if raw == "":
            return None
        try:
            return uuid.UUID(raw)
        except ValueError:
            raise forms.ValidationError(BATCH_UNREADABLE) from None


class BulkForm(forms.Form):
    """A bulk decision: the action, a reason and note for rejecting, which proposals
    (the checked rows, the preview's list, or everything that matches), and the step."""

    action = TextField()
    reason_code = TextField()
    note = TextField()
    scope = TextField(strip=True)
    step = TextField(strip=True)
    page = IdField()

    def clean(self):
        data = super().clean()
        data["step"] = data.get("step") or "preview"
        # Checked rows come as ``ids``; a preview's confirm form carries its whole list as
        # one ``id_list`` field (a thousand fields would pass Django's limit on fields).
        raw_ids = self.data.getlist("ids") + self.data.get("id_list", "").split(",")
        ids = [parse_id(raw) for raw in raw_ids]
        data["ids"] = list(dict.fromkeys(i for i in ids if i is not None))
        return data


class QueueWalkForm(forms.Form):
    """Where a reader is in the queue: the cursor to read after or before, one proposal
    asked for by ``id``, the card they came ``from`` (Previous from the first card stays
    on it), and ``only=total`` for the count alone. Cursors are judged by the selectors;
    an ``id`` that is not one is an error (the page answers 404)."""

    after = TextField()
    before = TextField()
    id = forms.CharField(required=False, strip=False)  # a NUL byte in it is an error too
    only = TextField(strip=True)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["from"] = IdField()  # a Python keyword, so not a class attribute

    def clean_id(self) -> int | None:
        raw = self.cleaned_data["id"]
        if not raw:
            return None
        pk = parse_row_id(raw)
        if pk is None:
            raise forms.ValidationError("No such proposal.")
        return pk


class AssignmentForm(forms.Form):
    """A curator's assignment: a name, the Queue filter, who, and an optional target.
    The service judges the filter and the assignee and says what is wrong in words."""

    name = TextField()
    query = TextField(strip=True)
    assignee = TextField(strip=True)
    target = TextField(strip=True)

    def clean_name(self) -> str:
        return clean_text(self.cleaned_data["name"], 500)

    def clean_target(self) -> int | None:
        raw = self.cleaned_data["target"]
        if raw == "":
            return None
        number = parse_int(raw, low=1, high=1_000_000)
        if number is None:
            raise forms.ValidationError("The target is a whole number of proposals, from 1.")
        return number

    def clean(self):
        data = super().clean()
        who = data.get("assignee", "")
        kind, _, pk = who.partition(":")
        row = parse_row_id(pk)
        data["user_id"] = row if kind == "u" else None
        data["group_id"] = row if kind == "g" else None
        if row is None or kind not in ("u", "g"):
            raise forms.ValidationError("Choose who the work goes to.")
        return data

    error_words = DecisionForm.error_words
