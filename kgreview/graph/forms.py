"""Inputs of the graph's pages, read through forms."""

from __future__ import annotations

from django import forms
from django.http import Http404

from .models import Source, SourceRevision

# Revision numbers are stored in a 32-bit column; anything larger names no revision.
MAX_REVISION = 2**31 - 1


class RevisionForm(forms.Form):
    """``?rev=N`` on a source's pages: a revision number, or nothing for the current one."""

    rev = forms.IntegerField(required=False, min_value=0, max_value=MAX_REVISION)

    def revision_of(self, source: Source) -> SourceRevision | None:
        """The revision asked for, else the current one (None when the source has no text
        yet); 404, in words, for a number the source does not have."""
        wanted = self.data.get("rev")
        if not wanted:
            return source.current_revision
        self.is_valid()  # other fields of a subclass may fail; only ``rev`` matters here
        if "rev" in self.errors or self.cleaned_data.get("rev") is None:
            raise Http404(f"{source.slug} has no revision {wanted!r}")
        try:
            return source.revisions.get(number=self.cleaned_data["rev"])
        except SourceRevision.DoesNotExist:
            raise Http404(f"{source.slug} has no revision {wanted!r}") from None


CONCEPT_FILTERS = ("active", "orphans", "merged", "retired", "all")


class ConceptListForm(forms.Form):
    """The concept list's search (``q``, spaces collapsed, 100 characters at most), which
    concepts to show (an unknown choice shows the active ones) and where a page starts."""

    q = forms.CharField(required=False)
    show = forms.ChoiceField(required=False, choices=[(c, c) for c in CONCEPT_FILTERS])
    after = forms.CharField(required=False, strip=False)

    def clean_q(self) -> str:
        return " ".join(self.cleaned_data["q"].split())[:100]

    def values(self) -> tuple[str, str, str]:
        """``(q, show, after)`` with every unusable value replaced by its default."""
        self.is_valid()
        data = self.cleaned_data
        return data.get("q", ""), data.get("show") or "active", data.get("after", "")
