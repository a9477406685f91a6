"""The JSON-LD context of kgreview exports: every term, its IRI and what it means.

One table (``TERMS``) feeds the ``@context`` written into each export, the bare context
served at ``/exports/context.jsonld`` and the term table on the exports page, so the
three cannot drift apart. ``kgreview/exports/CONTEXT.md`` explains them with examples.

The IRIs below are part of the export format: changing one breaks every consumer that
stored an earlier export, so add terms, never rename them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

#: Terms kgreview defines itself (classes and properties with no standard equivalent).
KG = "https://kgreview.example/ns#"
#: Relation types, one property per vocabulary key. A separate namespace, so a curator's
#: relation key can never collide with one of kgreview's own terms.
REL = "https://kgreview.example/ns/relation/"
#: Identifiers of exported things (concepts, edges, sources, users, proposals, ...).
ID = "https://kgreview.example/id/"

PREFIXES: dict[str, str] = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "prov": "http://www.w3.org/ns/prov#",
    "dcterms": "http://purl.org/dc/terms/",
    "foaf": "http://xmlns.com/foaf/0.1/",
    "kg": KG,
    "rel": REL,
    # Plural, like the path segments, and so never the name of a term ("proposal" and
    # "decision" are terms; a term of the same name would hide the prefix).
    "concepts": ID + "concepts/",
    "edges": ID + "edges/",
    "sources": ID + "sources/",
    "proposals": ID + "proposals/",
    "decisions": ID + "decisions/",
    "users": ID + "users/",
}


@dataclass(frozen=True)
class Term:
    name: str
    iri: str  # compact, using PREFIXES
    meaning: str
    type: str = ""  # "@id" for links, an xsd datatype for typed literals
    container: str = ""


TERMS: tuple[Term, ...] = (
    # Concepts
    Term("prefLabel", "skos:prefLabel", "A concept's canonical name."),
    Term(
        "altLabel",
        "skos:altLabel",
        "Another name of the concept: an alias, or the name of a concept merged into it.",
        container="@set",
    ),
    Term("definition", "skos:definition", "A concept's or relation type's description."),
    Term("identifier", "dcterms:identifier", "The database id (concepts and edges).", "xsd:long"),
    Term(
        "status",
        "kg:status",
        "The row's status when exported: concepts active/merged/retired, "
        "edges active/superseded/invalidated.",
    ),
    Term(
        "created",
        "dcterms:created",
        "When the concept or relation type was created.",
        "xsd:dateTime",
    ),
    Term("mergedInto", "kg:mergedInto", "The concept a merged concept now points at.", "@id"),
    # Statements (edges)
    Term("subject", "rdf:subject", "The edge's source concept.", "@id"),
    Term("predicate", "rdf:predicate", "The edge's relation type, a property under rel:.", "@id"),
    Term("object", "rdf:object", "The edge's target concept.", "@id"),
    Term("relation", "kg:relation", "The relation type's key, as a plain string."),
    Term("symmetric", "kg:symmetric", "The relation reads the same both ways.", "xsd:boolean"),
    Term("confidence", "kg:confidence", "How sure the proposer was, 0 to 1.", "xsd:double"),
    Term("weight", "kg:weight", "The edge weight (1 unless a curator set another).", "xsd:double"),
    Term("reason", "kg:reason", "Why the edge holds, in words."),
    Term("validAt", "kg:validAt", "When the fact holds from (valid time).", "xsd:dateTime"),
    Term(
        "recordedAt",
        "prov:generatedAtTime",
        "When the graph recorded the edge (transaction time).",
        "xsd:dateTime",
    ),
    Term(
        "invalidAt",
        "prov:invalidatedAtTime",
        "When the edge was superseded or invalidated, if it was.",
        "xsd:dateTime",
    ),
    Term("evidence", "prov:wasDerivedFrom", "The evidence span the edge was drawn from.", "@id"),
    Term("proposal", "kg:proposal", "The proposal that suggested the edge.", "@id"),
    Term(
        "decision",
        "prov:wasGeneratedBy",
        "The reviewer's decision (a prov:Activity) that put the edge in the graph.",
        "@id",
    ),
    Term("decidedBy", "prov:wasAttributedTo", "The person who decided (a prov:Agent).", "@id"),
    Term("username", "foaf:accountName", "A person's kgreview username."),
    # Evidence
    Term("quote", "prov:value", "The verbatim text quoted as evidence."),
    Term("start", "kg:start", "Offset of the quote's first character in the revision.", "xsd:long"),
    Term("end", "kg:end", "Offset just past the quote's last character.", "xsd:long"),
    Term(
        "page",
        "kg:page",
        "The page the quote starts on, from 1, in a paged document (a PDF); left out for "
        "formats without pages.",
        "xsd:long",
    ),
    Term(
        "section",
        "kg:sectionPath",
        "The headings the quote sits under, outermost first (an ordered list); left out "
        "when it sits under none.",
        container="@list",
    ),
    Term("quotedFrom", "prov:wasQuotedFrom", "The source revision the quote is from.", "@id"),
    Term("sourceSlug", "kg:sourceSlug", "The slug of the quoted source."),
    Term(
        "revisionNumber",
        "kg:revisionNumber",
        "The number of a source revision (from 1).",
        "xsd:long",
    ),
    Term("isVersionOf", "dcterms:isVersionOf", "The source a revision is a version of.", "@id"),
    # Relation types
    Term("key", "kg:key", "A relation type's key, e.g. prerequisite."),
    Term("label", "rdfs:label", "A relation type's human label."),
    Term("verb", "kg:verb", 'How "source <verb> target" reads, e.g. "is a prerequisite for".'),
    Term("directed", "kg:directed", "The relation has a direction.", "xsd:boolean"),
    Term("acyclic", "kg:acyclic", "Edges of the relation never form a cycle.", "xsd:boolean"),
    Term("active", "kg:active", "The relation type is in the active vocabulary.", "xsd:boolean"),
    Term("retiredAt", "kg:retiredAt", "When the relation type was retired.", "xsd:dateTime"),
    # The export itself
    Term("asOf", "kg:asOf", "The instant the exported graph describes.", "xsd:dateTime"),
    Term("generatedAt", "prov:generatedAtTime", "When the export was made.", "xsd:dateTime"),
    Term("conceptCount", "kg:conceptCount", "How many concepts the export holds.", "xsd:long"),
    Term("edgeCount", "kg:edgeCount", "How many edges (statements) the export holds.", "xsd:long"),
    # Attribute values (issue 27)
    Term(
        "attribute",
        "kg:attribute",
        "A value the concept held at the instant for an attribute of its type.",
        container="@set",
    ),
    Term("attributeKey", "kg:attributeKey", "The key of the attribute a value is for."),
    Term("declaredBy", "kg:declaredBy", "The key of the concept type that declares the attribute."),
    Term(
        "datatype",
        "kg:datatype",
        "The attribute's datatype: string, integer, decimal, boolean, date or uri.",
    ),
    Term(
        "value",
        "rdf:value",
        "The value, in its datatype's canonical form, as a literal of the matching XSD type.",
    ),
)

#: The XSD type of each attribute datatype's literals (their canonical forms are XSD's).
XSD_OF: dict[str, str] = {
    "string": "xsd:string",
    "integer": "xsd:integer",
    "decimal": "xsd:decimal",
    "boolean": "xsd:boolean",
    "date": "xsd:date",
    "uri": "xsd:anyURI",
}

#: Classes used as ``@type`` values, documented alongside the terms.
CLASSES: tuple[tuple[str, str], ...] = (
    ("skos:Concept", "A concept (node) of the graph."),
    ("rdf:Statement", "An edge, reified: it carries subject, predicate, object and provenance."),
    ("rdf:Property", "A relation type; its IRI is rel:<key>."),
    ("kg:RelationType", "A relation type of kgreview's vocabulary."),
    ("owl:SymmetricProperty", "Added to symmetric relation types."),
    ("kg:EvidenceSpan", "A quoted span of a source revision (also a prov:Entity)."),
    ("prov:Entity", "Evidence spans, source revisions and the export itself."),
    ("prov:Agent", "A person who decided."),
    ("kg:Export", "The export: its instant and counts."),
    ("kg:AttributeValue", "A concept's value for an attribute, with its evidence and decision."),
)


def _definition(term: Term) -> str | dict:
    if not term.type and not term.container:
        return term.iri
    out: dict = {"@id": term.iri}
    if term.type:
        out["@type"] = term.type
    if term.container:
        out["@container"] = term.container
    return out


def context() -> dict:
    """The ``@context`` object (a fresh dict each call; callers may not share it)."""
    return {**PREFIXES, **{t.name: _definition(t) for t in TERMS}}


def expand(compact: str) -> str:
    prefix, _, rest = compact.partition(":")
    return PREFIXES[prefix] + rest


# --- Identifiers (compact IRIs, expanded by the context) ----------------------------------


def _identifier(prefix: str) -> Callable[[int | str], str]:
    """The maker of one kind of identifier: ``prefix:key``, the key quoted so that the
    IRI stays valid whatever a slug, key or username holds (a number quotes to itself)."""

    def iri(key: int | str) -> str:
        return f"{prefix}:{quote(str(key), safe='')}"

    return iri


concept_iri = _identifier("concepts")
edge_iri = _identifier("edges")
relation_iri = _identifier("rel")
source_iri = _identifier("sources")
proposal_iri = _identifier("proposals")
decision_iri = _identifier("decisions")
user_iri = _identifier("users")


def revision_iri(slug: str, number: int) -> str:
    return f"{source_iri(slug)}/revisions/{number}"
