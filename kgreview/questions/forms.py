"""The Questions pages' forms: what the add / edit form and Run now read from a POST.
They parse only; the services judge (known concepts, lengths) and say what is wrong."""

from __future__ import annotations

import re

from django import forms

from kgreview.core.forms import RowIdField, TextField

from .models import CompetencyQuestion
from .services import QuestionSpec

ANSWERS = [("", "—"), ("yes", "Yes"), ("no", "No")]
_SPLIT = re.compile(r"[\n;]+")


class QuestionForm(forms.Form):
    """A competency question as a curator types it."""

    text = TextField(label="Question", max_length=2000)
    expect = forms.ChoiceField(
        label="Expected answer",
        choices=CompetencyQuestion.Expect.choices,
        error_messages={
            "required": "Choose the kind of answer: concepts, a path or yes / no.",
            "invalid_choice": "“%(value)s” is not a kind of answer: choose concepts, a path "
            "or yes / no.",
        },
    )
    names = TextField(
        label="Expected concepts",
        max_length=10000,
        help_text="One per line (or separated by semicolons). For a path, its two ends.",
    )
    yes = forms.ChoiceField(
        label="Expected yes or no",
        choices=ANSWERS,
        required=False,
        error_messages={"invalid_choice": "Answer yes or no, not “%(value)s”."},
    )
    note = TextField(label="Note", max_length=5000)

    def spec(self) -> QuestionSpec:
        data = self.cleaned_data
        names = tuple(n.strip() for n in _SPLIT.split(data["names"] or "") if n.strip())
        yes = {"yes": True, "no": False}.get(data.get("yes") or "")
        return QuestionSpec(
            text=data["text"], expect=data["expect"], names=names, yes=yes, note=data["note"]
        )

    @classmethod
    def initial_for(cls, question: CompetencyQuestion) -> dict:
        yes = {True: "yes", False: "no"}.get(question.expected_yes, "")  # type: ignore[arg-type]
        return {
            "text": question.text,
            "expect": question.expect,
            "names": "\n".join(question.expected_names),
            "yes": yes,
            "note": question.note,
        }


class RunNowForm(forms.Form):
    """Run now: every active question, or the one named."""

    question = RowIdField(
        error_messages={"invalid": "Name the question by its number, or leave it out."}
    )
