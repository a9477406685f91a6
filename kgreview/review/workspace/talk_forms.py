"""Inputs of the talk on a card (comments, questions, resolutions), read through forms.
The text fields drop control characters and never refuse; the services judge the text
(empty, too long) and say what is wrong in words."""

from __future__ import annotations

from django import forms

from kgreview.core.forms import RowIdField, TextField


class CommentForm(forms.Form):
    """A comment: its text and, for a reply, the comment it answers."""

    body = TextField()
    parent = RowIdField()


class CommentEditForm(forms.Form):
    body = TextField()


class PlaceForm(forms.Form):
    """Where the reviewer was in the queue (the card's hidden fields), so a question
    asked from the card moves on to the next card as a decision does."""

    q = TextField()
    cursor = TextField()
    trail = TextField()
    ask = TextField(strip=True)


class QuestionForm(PlaceForm):
    question = TextField()


class ResolveForm(PlaceForm):
    note = TextField()
