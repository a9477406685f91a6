"""The forms the mending pages read a person's input through (see ``mend_views``).

Each cleans what its page sends: ids that are not ids read as none given, NUL bytes are
dropped from text, and what is wrong is said in the words the pages have always used.
Notes and relation keys pass through as text: the ``mend`` services judge them and word
their own refusals. Apart from ``forms.py`` because they are a subject of their own.
"""

from __future__ import annotations

from django import forms

from kgreview.core.forms import TextField
from kgreview.core.markup import locate_quote
from kgreview.graph.models import Concept, SourceRevision
from kgreview.graph.services import Evidence
from kgreview.review.workspace.forms import IdField, clean_text, end_choice, parse_float

ROLES = ("source", "target")


class NoteForm(forms.Form):
    """A change whose only input is the person's reason (retiring an edge)."""

    note = TextField()


class EdgeAddForm(forms.Form):
    """An edge added by hand: two ends from the concept picker, a relation, a reason, a
    confidence, and optionally the quote that supports it, picked on a source page (a
    revision and the selected text, found again in the revision's text, or offsets).

    Every field is optional, so the form always cleans; ``refusal`` says in words what
    stops the edge from being added.
    """

    relation = TextField()
    note = TextField()
    confidence = TextField()
    revision = IdField()
    start = IdField()
    end = IdField()
    quote = TextField()
    before = TextField()
    source_concept_id = IdField()
    source_proposal_id = IdField()
    source_name = TextField()
    source_create = TextField()
    target_concept_id = IdField()
    target_proposal_id = IdField()
    target_name = TextField()
    target_create = TextField()

    def clean(self):
        data = super().clean()
        data["evidence"], data["evidence_problem"] = self._evidence(data)
        data["ends"] = {role: end_choice(self.data, role) for role in ROLES}
        return data

    def _evidence(self, data) -> tuple[Evidence | None, str]:
        """The evidence picked on a source page, and any problem with it in words."""
        revision_id = data.get("revision")
        if not revision_id:
            return None, ""
        revision = SourceRevision.objects.select_related("source").filter(pk=revision_id)
        revision = revision.first()
        if revision is None:
            return None, f"There is no source revision #{revision_id}."
        start, end = data.get("start"), data.get("end")
        if start is None or end is None:
            selected = data.get("quote", "")
            if not selected.strip():
                return None, "Select the sentence that supports the edge on the source page."
            found = locate_quote(
                revision.text,
                selected,
                before=data.get("before", ""),
                plain=revision.text_format == SourceRevision.TextFormat.PLAIN,
            )
            if found is None:
                return None, "The selected text was not found in that revision; select it again."
            start, end = found
        if not 0 <= start < end <= len(revision.text):
            return None, "The selected text lies outside the revision."
        quote = revision.text[start:end]
        return Evidence(revision=revision, start=start, end=end, quote=quote), ""

    def confidence_number(self) -> float:
        """The confidence typed (1.0 when left empty); ``ValueError`` when not a number."""
        number = parse_float(self.cleaned_data["confidence"])
        return 1.0 if number is None else number

    def refusal(self) -> str:
        """What stops the edge from being added, in words ('' when nothing does): the
        evidence first, then the confidence, then the ends."""
        data = self.cleaned_data
        if data["evidence_problem"]:
            return data["evidence_problem"]
        try:
            self.confidence_number()
        except ValueError:
            return "Confidence must be a number between 0 and 1."
        if None in data["ends"].values():
            return "Pick a concept for both ends."
        return ""

    def shown(self) -> dict:
        """What the person typed, to show the form again: the values and, for each end,
        the concept picked (by its own name) or the name typed."""
        data = self.cleaned_data
        ends = {}
        for role in ROLES:
            picked = data[f"{role}_concept_id"]
            concept = Concept.objects.filter(pk=picked).first() if picked else None
            ends[role] = {
                "name": concept.name if concept else clean_text(data[f"{role}_name"], 200),
                "concept_id": concept.pk if concept else "",
                "proposal_id": data[f"{role}_proposal_id"] or "",
                "create": data[f"{role}_create"],
            }
        values = {
            "relation": data["relation"],
            "note": clean_text(data["note"]),
            "confidence": data["confidence"] if "confidence" in self.data else "1.0",
        }
        return {"values": values, "ends": ends}


class ConceptStatusForm(forms.Form):
    """Retire a concept or bring it back, with an optional reason."""

    STATUSES = {"retire": "retired", "reactivate": "active"}

    action = TextField()
    note = TextField()

    def clean_action(self) -> str:
        status = self.STATUSES.get(self.cleaned_data["action"])
        if status is None:
            raise forms.ValidationError("Choose retire or reactivate.")
        return status


class ConceptNamesForm(forms.Form):
    """Rename a concept, add an alias or take one off: the action and the name (spaces
    tidied, 300 characters at most)."""

    NEEDS_NAME = {"rename": "Type the new name.", "add_alias": "Type the alias to add."}

    action = TextField()
    name = TextField()

    def clean_name(self) -> str:
        return clean_text(self.cleaned_data["name"], 300)

    def clean(self):
        data = super().clean()
        action = data.get("action")
        if action not in (*self.NEEDS_NAME, "remove_alias"):
            raise forms.ValidationError("Choose rename, add an alias or remove one.")
        if action in self.NEEDS_NAME and not data.get("name"):
            raise forms.ValidationError(self.NEEDS_NAME[action])
        return data


class ConceptTypeForm(forms.Form):
    """A concept's new type: a type's key, or nothing for none (the service judges the
    key and words its refusal), with an optional note."""

    type_key = TextField()
    note = TextField()

    def clean_type_key(self) -> str:
        return clean_text(self.cleaned_data["type_key"], 64)


class ConceptMergeForm(forms.Form):
    """The concept to merge with (picked in the concept picker, or carried as ``other``
    once chosen), the name typed in the picker, which of the two survives, and a note."""

    target_concept_id = IdField()
    other = IdField()
    target_name = TextField()
    survivor = IdField()
    note = TextField()

    def clean(self):
        data = super().clean()
        data["other_id"] = data.get("target_concept_id") or data.get("other")
        data["query"] = clean_text(data.get("target_name", ""))
        return data
