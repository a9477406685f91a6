"""What a vocabulary plan holds (``construction.vocab_plan`` makes it): the types,
relations with their patterns, attributes, concepts with their aliases and the edges a
SKOS or OWL file asks for, each citing its statements, and the words kgreview makes of
IRIs and labels. Pure: no Django."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

from rdflib.term import Node

from .text import normal_name

#: The SKOS relations a curator may map to the graph's relations.
MAPPABLE = ("broader", "narrower", "related")


# --- What a plan holds -------------------------------------------------------------------


@dataclass(frozen=True)
class TypePlan:
    key: str
    label: str
    description: str
    parent_key: str
    cites: tuple[str, ...]
    why: str


@dataclass(frozen=True)
class PatternPlan:
    relation_key: str
    domain_key: str
    range_key: str
    cites: tuple[str, ...]


@dataclass(frozen=True)
class RelationPlan:
    key: str
    label: str
    verb: str
    description: str
    symmetric: bool
    patterns: tuple[PatternPlan, ...]
    cites: tuple[str, ...]
    why: str
    # The key of the relation the file declares its inverse (``owl:inverseOf``), named by
    # the later of the two in the plan, so the earlier exists when it is accepted.
    inverse: str = ""


@dataclass(frozen=True)
class AttributePlan:
    type_key: str
    key: str
    label: str
    datatype: str
    description: str
    cites: tuple[str, ...]
    why: str


@dataclass(frozen=True)
class AliasPlan:
    name: str
    cite: str


@dataclass(frozen=True)
class ConceptPlan:
    name: str
    aliases: tuple[AliasPlan, ...]
    description: str
    type_key: str
    cites: tuple[str, ...]
    why: str


@dataclass(frozen=True)
class EdgePlan:
    source: str
    relation: str
    target: str
    cites: tuple[str, ...]
    why: str


@dataclass(frozen=True)
class Skip:
    """Something of the file the plan leaves out, and why, in words."""

    what: str
    reason: str


@dataclass
class VocabularyPlan:
    types: list[TypePlan] = field(default_factory=list)  # parents before their subtypes
    relations: list[RelationPlan] = field(default_factory=list)
    attributes: list[AttributePlan] = field(default_factory=list)
    concepts: list[ConceptPlan] = field(default_factory=list)
    edges: list[EdgePlan] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)

    def skip(self, what: str, reason: str) -> None:
        self.skipped.append(Skip(what[:300], reason))

    def counts(self) -> dict[str, int]:
        return {
            "concept_types": len(self.types),
            "relation_types": len(self.relations),
            "relation_patterns": sum(len(r.patterns) for r in self.relations),
            "attributes": len(self.attributes),
            "concepts": len(self.concepts),
            "aliases": sum(len(c.aliases) for c in self.concepts),
            "edges": len(self.edges),
        }


def parse_map(pairs: Iterable[str]) -> dict[str, str]:
    """``["broader=part_of", "related=related"]`` (or comma-separated) as a map, refused
    in words for a SKOS relation kgreview does not map or a pair without "="."""
    out: dict[str, str] = {}
    for item in pairs:
        for pair in item.split(","):
            pair = pair.strip()
            if not pair:
                continue
            skos, eq, relation = pair.partition("=")
            skos, relation = skos.strip().removeprefix("skos:"), relation.strip()
            if not eq or not relation:
                raise ValueError(f'"{pair[:60]}" is not a mapping: write skos_relation=relation.')
            if skos not in MAPPABLE:
                raise ValueError(
                    f'"{skos[:40]}" cannot be mapped: map {", ".join(MAPPABLE)} to relations '
                    "of the graph."
                )
            out[skos] = relation
    return out


# --- Words from IRIs and labels ----------------------------------------------------------


def local_name(term: Node) -> str:
    text = str(term).rstrip("/#")
    for sep in ("#", "/", ":"):
        if sep in text:
            text = text.rsplit(sep, 1)[1]
            break
    return text


def words_of(local: str) -> str:
    """ "CheckpointSetting" / "checkpoint_setting" -> "Checkpoint setting"."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", local)
    spaced = re.sub(r"[_\-.]+", " ", spaced).strip()
    return (spaced[:1].upper() + spaced[1:].lower()) if spaced else ""


def slug(words: str) -> str:
    """A key: ASCII letters, digits and underscores, starting with a letter (64 at most)."""
    ascii_words = unicodedata.normalize("NFKD", words).encode("ascii", "ignore").decode()
    ascii_words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", ascii_words).lower()
    key = "_".join(part for part in re.split(r"[^a-z0-9]+", ascii_words) if part)
    if key and not key[0].isalpha():
        key = "t_" + key
    return key[:64].rstrip("_")


def clean(text: str, limit: int) -> str:
    return normal_name(" ".join(str(text).split()))[:limit]
