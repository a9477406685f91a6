"""Inputs of the Ontology page's relation patterns section, read through forms."""

from __future__ import annotations

from django import forms

from kgreview.core.forms import TextField


class PatternAddForm(forms.Form):
    """A pattern to allow: a relation's key and two concept types' keys (the service
    says in words which does not exist), and a description of 5,000 characters at most."""

    relation_key = forms.CharField(max_length=64)
    domain_key = forms.CharField(max_length=64)
    range_key = forms.CharField(max_length=64)
    description = TextField(strip=True, max_length=5000)


class PatternActionForm(forms.Form):
    """Retire a pattern, or allow a retired one again."""

    action = forms.ChoiceField(choices=[("retire", "retire"), ("reactivate", "reactivate")])
