"""The export form: a format and an optional instant."""

from __future__ import annotations

from django import forms

from kgreview.core.forms import InstantField

from .writers import FORMATS


class ExportForm(forms.Form):
    format = forms.ChoiceField(
        choices=[(f.key, f.label) for f in FORMATS.values()],
        initial="jsonld",
        widget=forms.RadioSelect,
        error_messages={
            "invalid_choice": "Choose one of the formats: "
            + ", ".join(f.label for f in FORMATS.values())
            + "."
        },
    )
    as_of = InstantField(
        label="As of",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local", "step": "1"}),
        help_text="Leave empty for the graph as it is now.",
    )

    raw_cells = forms.BooleanField(
        required=False,
        label="Keep text cells raw",
        help_text=(
            "CSV only. By default a text cell starting with =, +, -, @, a tab or a "
            "carriage return gets a leading apostrophe, so a spreadsheet shows it as text "
            "instead of running it. Keep them raw when the zip goes straight into "
            "neo4j-admin."
        ),
    )

    def clean(self):
        cleaned = super().clean()
        fmt = cleaned.get("format")
        if cleaned.get("raw_cells") and fmt and not FORMATS[fmt].cells:
            self.add_error(
                "raw_cells", f"Raw cells are for the CSV export; {FORMATS[fmt].label} has none."
            )
        return cleaned


class ReleaseForm(forms.Form):
    """A curator's request for a release: its name, an optional instant, their notes.
    The name's rules and the instant's are the service's (``releases.names``), said in
    its words."""

    name = forms.CharField(
        label="Name",
        strip=True,
        help_text="A slug, e.g. 2026-12 or v1.0: lower-case letters, digits, dots, hyphens "
        "and underscores. It is the release's address and never changes.",
        error_messages={"required": "Give the release a name, e.g. 2026-12."},
    )
    as_of = InstantField(
        label="As of",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local", "step": "1"}),
        help_text="Leave empty for now. Never in the future, never before the previous release.",
    )
    notes = forms.CharField(
        label="Notes",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Your own words; the changes since the previous release are listed for you.",
    )
