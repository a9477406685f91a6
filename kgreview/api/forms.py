"""The API tokens page's form: the name and scope of a new token."""

from __future__ import annotations

from django import forms


class TokenForm(forms.Form):
    """The name as typed; ``api_token_create`` tidies its spaces and says what is wrong
    with it (blank, too long). The field itself refuses only what no name may hold, such
    as a null character."""

    name = forms.CharField(required=False, strip=False)
    # Absent (an older form, a script) means read, the scope every token had before.
    scope = forms.ChoiceField(
        required=False,
        choices=[("read", "read"), ("propose", "propose")],
        error_messages={"invalid_choice": "A token's scope is read or propose."},
    )

    def error_in_words(self) -> str:
        return next((e for errors in self.errors.values() for e in errors), "")
