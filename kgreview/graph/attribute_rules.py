"""The rule book for attributes: what a type may declare and what value a concept may
hold for it, and the words of each refusal (issue 27).

Like ``graph.rules``, every rule is a pure function over rows the caller already loaded:
it returns ``None`` when the thing passes, else the refusal as a ``DomainError``, which
``graph.services.attributes`` raises and the ``add_attribute`` and ``set_attribute``
kinds show as blockers, so a rule and its sentence are written once.

The rules: an attribute's key is a slug (a type's rule), its label holds words; its
datatype is one of the fixed set (``Attribute.Datatype``); a key is declared once along a
type's chain (a subtype inherits its ancestors' attributes, so it cannot declare one of
theirs again). A value is given to an active concept, for an active attribute that the
concept's type or one of its ancestors declares, in its datatype's lexical space; it is
stored in the datatype's canonical form (``canonical_value``):

- ``string``: the text with its outer spaces trimmed (1 to 2,000 characters, no
  control characters);
- ``integer``: an optional sign and digits, thousands grouped by commas allowed
  ("1,024"); stored without the commas, the ``+`` or leading zeros ("1024", "-3");
- ``decimal``: the same, with an optional fractional part and no exponent; stored with at
  least one digit after the point and no trailing zeros beyond it ("0.5", "12.0"), the
  canonical form of XML Schema 1.0's decimal;
- ``boolean``: true/false, yes/no, on/off or 1/0 in any case; stored "true" or "false";
- ``date``: an ISO 8601 calendar date YYYY-MM-DD that exists; stored as it is;
- ``uri``: a scheme ("https:", "mailto:", "urn:") and no spaces; stored with its scheme in
  lowercase.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date
from decimal import Decimal

from construction.text import CONTROL
from kgreview.core.errors import (
    DomainError,
    NameTaken,
    StateConflict,
    ValidationFailed,
)

from .models import Attribute, AttributeValue, Concept, ConceptType
from .rules import end_refusal, key_refusal, shown_key, switch_refusal, words_refusal

VALUE_MAX = 2000
DATATYPES = tuple(Attribute.Datatype.values)

# What each datatype takes, said after "takes …" in a refusal.
_TAKES = {
    "string": "text of 1 to 2,000 characters",
    "integer": 'a whole number, such as 1024 or "1,024"',
    "decimal": "a decimal number, such as 0.5 or 1,250.75",
    "boolean": "yes or no (true/false, on/off, 1/0)",
    "date": "a date written YYYY-MM-DD, such as 2024-03-31",
    "uri": "a web address with its scheme, such as https://example.org/page",
}

_INTEGER = re.compile(r"([+-]?)(\d{1,3}(?:,\d{3})+|\d+)")
_DECIMAL = re.compile(r"([+-]?)(\d{1,3}(?:,\d{3})+|\d+)?(?:\.(\d+))?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_URI = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):(\S+)")
_BOOLEAN = {
    "true": "true",
    "yes": "true",
    "on": "true",
    "1": "true",
    "false": "false",
    "no": "false",
    "off": "false",
    "0": "false",
}


# --- Declaring an attribute --------------------------------------------------------------


def attribute_key_refusal(key: str) -> ValidationFailed | None:
    """An attribute's key is a short slug, as a type's is (``rules.key_refusal``)."""
    return key_refusal(key, thing="an attribute", example="default_value")


def attribute_words_refusal(label: str, description: str) -> ValidationFailed | None:
    """An attribute's label holds words, as a type's does (``rules.words_refusal``)."""
    return words_refusal(label, description, thing="an attribute", says="what it records")


def datatype_refusal(datatype: str) -> ValidationFailed | None:
    """A datatype is one of the fixed set."""
    if datatype in DATATYPES:
        return None
    return ValidationFailed(
        f'"{shown_key(datatype)}" is not an attribute datatype: use one of {", ".join(DATATYPES)}.'
    )


def attribute_taken(type_key: str, key: str, *, declared_by: str | None = None) -> NameTaken:
    """The refusal of an attribute whose key its type, or a type above it, declares."""
    if declared_by is None or declared_by == type_key:
        return NameTaken(f'The concept type "{type_key}" already declares the attribute "{key}".')
    return NameTaken(
        f'The concept type "{type_key}" already has the attribute "{key}" from the type '
        f'above it, "{declared_by}".'
    )


def attribute_declared_refusal(
    concept_type: ConceptType,
    key: str,
    chain: Sequence[ConceptType],
    held: Mapping[int, Attribute],
) -> NameTaken | None:
    """A key is declared once along a type's chain: refused when the type declares it
    (active or retired) or a type above it does (active). ``chain``: the type and every
    type above it, the type first; ``held``: the attributes with that key among them, by
    their type's id."""
    for t in chain:
        attribute = held.get(t.pk)
        if attribute is not None and (t.pk == concept_type.pk or attribute.active):
            return attribute_taken(concept_type.key, key, declared_by=t.key)
    return None


def no_attribute(type_key: str, key: str) -> ValidationFailed:
    """The refusal of an attribute that no type declares under that key."""
    if CONTROL.search(type_key + key) or len(type_key) > 64 or len(key) > 64:
        return ValidationFailed("There is no attribute by that key.")
    return ValidationFailed(f'The concept type "{type_key}" declares no attribute "{key}".')


def attribute_active_refusal(attribute: Attribute) -> StateConflict | None:
    """A retired attribute takes no new value."""
    if attribute.active:
        return None
    return StateConflict(
        f'The attribute "{attribute.key}" of "{attribute.concept_type.key}" was retired and '
        "takes no new value; a curator can reactivate it on the Ontology page."
    )


def attribute_switch_refusal(attribute: Attribute, *, active: bool) -> StateConflict | None:
    """Retiring a retired attribute, or reactivating an active one, changes nothing; an
    attribute of a retired type is not reactivated."""
    where = f'The attribute "{attribute.key}" of "{attribute.concept_type.key}"'
    refusal = switch_refusal(attribute, active=active, what=where)
    if refusal is not None:
        return refusal
    if active and not attribute.concept_type.active:
        return StateConflict(
            f"{where} cannot be reactivated while its type is retired; reactivate the type first."
        )
    return None


def attribute_in_use(attribute: Attribute, values: int) -> StateConflict | None:
    """An attribute that concepts already hold values for is retired, not taken back."""
    if not values:
        return None
    return StateConflict(
        f'The attribute "{attribute.key}" of "{attribute.concept_type.key}" already has '
        f"{values} value{'s' if values != 1 else ''}; retire it instead."
    )


# --- A concept's value -------------------------------------------------------------------


def _integer(text: str) -> str | None:
    match = _INTEGER.fullmatch(text)
    if match is None:
        return None
    number = int(match.group(2).replace(",", ""))
    return str(-number if match.group(1) == "-" else number)


def _decimal(text: str) -> str | None:
    match = _DECIMAL.fullmatch(text)
    if match is None or not (match.group(2) or match.group(3)):
        return None
    whole = (match.group(2) or "0").replace(",", "")
    number = Decimal(f"{match.group(1)}{whole}.{match.group(3) or '0'}")  # digits only
    shown = f"{abs(number):f}"
    if "." not in shown:
        shown += ".0"
    whole_part, fraction = shown.split(".")
    fraction = fraction.rstrip("0") or "0"
    whole_part = whole_part.lstrip("0") or "0"
    negative = number < 0 and not (whole_part == "0" and fraction == "0")
    return f"{'-' if negative else ''}{whole_part}.{fraction}"


def _date(text: str) -> str | None:
    if not _DATE.fullmatch(text):
        return None
    try:
        return date.fromisoformat(text).isoformat()
    except ValueError:
        return None


def _uri(text: str) -> str | None:
    match = _URI.fullmatch(text)
    if match is None:
        return None
    return f"{match.group(1).lower()}:{match.group(2)}"


def _parsed(datatype: str, text: str) -> str | None:
    """The canonical form of ``text`` in ``datatype``, or ``None`` outside its space."""
    if not text or len(text) > VALUE_MAX or CONTROL.search(text):
        return None
    if datatype == "string":
        return text
    if datatype == "integer":
        return _integer(text)
    if datatype == "decimal":
        return _decimal(text)
    if datatype == "boolean":
        return _BOOLEAN.get(text.lower())
    if datatype == "date":
        return _date(text)
    if datatype == "uri":
        return _uri(text)
    return None


def _value_shown(value: str) -> str:
    shown = CONTROL.sub("", value)
    return shown if len(shown) <= 60 else shown[:57] + "…"


def value_refusal(attribute: Attribute, value: str) -> ValidationFailed | None:
    """A value lies in its attribute's datatype (the module's list); the refusal names the
    value, the attribute and what its datatype takes."""
    if _parsed(attribute.datatype, value.strip()) is not None:
        return None
    label = Attribute.Datatype(attribute.datatype).label.lower()
    return ValidationFailed(
        f'"{_value_shown(value.strip())}" is not a valid {attribute.label} '
        f'("{attribute.key}"): it is a {label} ({attribute.datatype}) and takes '
        f"{_TAKES[attribute.datatype]}."
    )


def canonical_value(datatype: str, value: str) -> str:
    """The stored form of a value its datatype takes (see the module's list); a value
    outside the datatype raises ``ValueError`` (check ``value_refusal`` first)."""
    parsed = _parsed(datatype, value.strip())
    if parsed is None:
        raise ValueError(f"{value!r} is not a {datatype}")
    return parsed


def declared_refusal(
    concept: Concept,
    chain: Sequence[ConceptType],
    attribute: Attribute,
) -> ValidationFailed | None:
    """A concept holds a value only for an attribute its type declares, or a type above
    it does (a subtype inherits). ``chain`` is the concept's type and its ancestors, the
    type first (empty for an untyped concept)."""
    if any(t.pk == attribute.concept_type_id for t in chain):
        return None
    owner = attribute.concept_type
    if not chain:
        return ValidationFailed(
            f'"{concept.name}" has no type, so it has no attribute "{attribute.key}": '
            f'give it the type "{owner.key}" (or a type below it) first.'
        )
    return ValidationFailed(
        f'"{concept.name}" is a {chain[0].label} ("{chain[0].key}"), and neither that type '
        f'nor a type above it declares the attribute "{attribute.key}" (it is '
        f'"{owner.key}"\'s).'
    )


def value_concept_refusal(concept: Concept) -> DomainError | None:
    """A value is given to an active concept (not retired, not merged): the edge rule
    book's words for an end (``rules.end_refusal``)."""
    return end_refusal(concept)


def unchanged_refusal(concept: Concept, attribute: Attribute, value: str) -> StateConflict:
    """The refusal of a value a concept holds already."""
    return StateConflict(
        f'The {attribute.label} of "{concept.name}" is "{_value_shown(value)}" already.'
    )


def value_refusal_first(
    concept: Concept, chain: Sequence[ConceptType], attribute: Attribute, value: str
) -> DomainError | None:
    """The first rule a new value breaks: the concept active, the attribute active and
    declared along the concept's type chain, the value in its datatype."""
    return (
        value_concept_refusal(concept)
        or attribute_active_refusal(attribute)
        or declared_refusal(concept, chain, attribute)
        or value_refusal(attribute, value)
    )


def value_ended_refusal(row: AttributeValue) -> StateConflict:
    """The refusal of ending a value that is no longer current."""
    return StateConflict(
        f'The {row.attribute.label} "{_value_shown(row.value)}" of "{row.concept.name}" '
        f"was {row.status} already."
    )


def value_held_refusal(concept: Concept, attribute: Attribute, value: str) -> StateConflict:
    """The refusal of giving back an older value while the concept holds another."""
    return StateConflict(
        f'"{concept.name}" holds the {attribute.label} "{_value_shown(value)}" now; '
        "the older value cannot be given back over it."
    )
