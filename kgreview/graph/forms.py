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
