"""Inputs of the Ontology page's attribute and relation pattern sections, read through
forms (the services judge the keys and words, and word their refusals)."""

from __future__ import annotations

from django import forms

from kgreview.core.forms import TextField


class AttributeAddForm(forms.Form):
    """A new attribute: the type's key, its own key, label, datatype and description (the
    service judges them and words its refusals)."""

    type_key = TextField(strip=True)
    key = TextField(strip=True)
    label = TextField(strip=True)
    datatype = TextField(strip=True)
    description = TextField()


class PatternAddForm(forms.Form):
    """A pattern to allow: a relation's key and two concept types' keys (the service
    says in words which does not exist), and a description of 5,000 characters at most."""

    relation_key = forms.CharField(max_length=64)
    domain_key = forms.CharField(max_length=64)
    range_key = forms.CharField(max_length=64)
    description = TextField(strip=True, max_length=5000)


class SwitchForm(forms.Form):
    """Retire an attribute or a pattern, or bring a retired one back."""

    action = forms.ChoiceField(
        choices=[("retire", "retire"), ("reactivate", "reactivate")],
        error_messages={"invalid_choice": "Choose retire or reactivate."},
    )
