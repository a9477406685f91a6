"""Inputs of the graph's pages, read through forms."""

from __future__ import annotations

from django import forms
from django.http import Http404

from kgreview.core.forms import TextField

from . import rules
from .models import Source, SourceRevision
from .type_selectors import type_family

# Revision numbers are stored in a 32-bit column; anything larger names no revision.
MAX_REVISION = 2**31 - 1


class RevisionForm(forms.Form):
    """``?rev=N`` on a source's pages: a revision number, or nothing for the current one."""

    rev = forms.IntegerField(required=False, min_value=0, max_value=MAX_REVISION)

    def names_a_revision(self) -> bool:
        """Whether a revision was asked for at all (else the current one is meant)."""
        return bool(self.data.get("rev"))

    def revision_of(self, source: Source) -> SourceRevision | None:
        """The revision asked for, else the current one (None when the source has no text
        yet); 404, in words, for a number the source does not have."""
        if not self.names_a_revision():
            return source.current_revision
        wanted = self.data.get("rev")
        self.is_valid()  # other fields of a subclass may fail; only ``rev`` matters here
        if "rev" in self.errors or self.cleaned_data.get("rev") is None:
            raise Http404(f"{source.slug} has no revision {wanted!r}")
        try:
            return source.revisions.get(number=self.cleaned_data["rev"])
        except SourceRevision.DoesNotExist:
            raise Http404(f"{source.slug} has no revision {wanted!r}") from None


CONCEPT_FILTERS = ("active", "orphans", "merged", "retired", "all")
#: The concept list's type filter for concepts with no type (no type's key starts so).
UNTYPED = "-"


class ConceptListForm(forms.Form):
    """The concept list's search (``q``, spaces collapsed, 100 characters at most), which
    concepts to show (an unknown choice shows the active ones) and where a page starts."""

    q = forms.CharField(required=False)
    show = forms.ChoiceField(required=False, choices=[(c, c) for c in CONCEPT_FILTERS])
    after = forms.CharField(required=False, strip=False)
    type = forms.CharField(required=False, max_length=200)

    def clean_q(self) -> str:
        return " ".join(self.cleaned_data["q"].split())[:100]

    def values(self) -> tuple[str, str, str]:
        """``(q, show, after)`` with every unusable value replaced by its default."""
        self.is_valid()
        data = self.cleaned_data
        return data.get("q", ""), data.get("show") or "active", data.get("after", "")

    def type_filter(self) -> tuple[str, set[int] | None, str]:
        """``(key, family, problem)``: the type asked for (``""``: any; ``UNTYPED``: none),
        the ids of it and its subtypes (``None``: no type filter; empty: untyped only),
        and why an unknown key was left out, in words."""
        self.is_valid()
        key = self.cleaned_data.get("type", "").strip()
        if not key:
            return "", None, ""
        if key == UNTYPED:
            return key, set(), ""
        family = type_family(key)
        if family is None:
            refusal = rules.type_key_refusal(key) or rules.no_type(key)
            return "", None, f"{refusal} Showing concepts of every type."
        return key, family, ""


class RelationActionForm(forms.Form):
    """A curator's change to a relation type: retire it, reactivate it, describe it
    (a label and a verb, 100 characters each at most, a description of 5,000, and its
    inverse's key: "" for none, absent to leave it as it is), or write its guideline (the
    service judges its length and words its refusal)."""

    ACTIONS = ("retire", "reactivate", "describe", "guideline")

    action = TextField()
    label = TextField(strip=True)
    verb = TextField(strip=True)
    description = TextField()
    guideline = TextField()
    # The key of its inverse ("" for none); a form without the field leaves it as it is.
    inverse_key = TextField(strip=True)

    def clean(self):
        data = super().clean()
        if data.get("action") not in self.ACTIONS:
            raise forms.ValidationError("Choose retire, reactivate, describe or guideline.")
        data["inverse_key"] = data.get("inverse_key", "") if "inverse_key" in self.data else None
        if data["action"] == "describe" and not (data.get("label") and data.get("verb")):
            raise forms.ValidationError("A relation needs a label and a verb.")
        data["label"] = data.get("label", "")[:100]
        data["verb"] = data.get("verb", "")[:100]
        data["description"] = data.get("description", "")[:5000]
        return data


class ConceptTypeActionForm(forms.Form):
    """A curator's change to a concept type on the Ontology page: retire it, reactivate
    it, or describe it (a label, a description and a parent's key, none for a top type;
    the service judges them and words its refusals)."""

    ACTIONS = ("retire", "reactivate", "describe", "guideline")

    action = TextField()
    label = TextField(strip=True)
    description = TextField()
    parent_key = TextField(strip=True)
    guideline = TextField()

    def clean_action(self) -> str:
        action = self.cleaned_data["action"]
        if action not in self.ACTIONS:
            raise forms.ValidationError("Choose retire, reactivate, describe or guideline.")
        return action
