"""Streaming writers: the graph as of an instant as JSON-LD, neo4j-admin CSV or GraphML.

Every writer is a generator of text (or, for the zip, bytes) chunks of about 64 KiB.
Concepts and edges are read with ``.iterator(chunk_size=2000)``, so a large graph never
sits in memory as objects: the command writes chunks to a file, the download view hands
them to ``StreamingHttpResponse``.

One module per format (``jsonld``, ``neo4j_csv``, ``graphml``, ``rdf`` for turtle, skos
and owl; the shacl shapes are ``exports.shapes``), each written from the
shared ``records``; this module lists the formats for the command and the views.
Formats are described for people in ``CONTEXT.md`` next to this package.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from .graphml import write_graphml
from .jsonld import write_jsonld
from .neo4j_csv import write_csv_zip
from .rdf import write_owl, write_skos, write_turtle


def _write_shacl(*, at: datetime, stats=None) -> Iterator[str]:
    from ..shapes import write_shacl  # the shapes sit above the writers they validate

    return write_shacl(at=at, stats=stats)


@dataclass(frozen=True)
class Format:
    key: str
    label: str
    extension: str
    content_type: str
    binary: bool
    write: Callable[..., Iterator]
    summary: str
    #: Whether the format's text cells open in spreadsheets, so a cell that starts like a
    #: formula is neutralised unless the caller asks for raw cells.
    cells: bool = False

    def stream(self, *, at: datetime, stats=None, raw_cells: bool = False) -> Iterator:
        """The export's chunks; ``raw_cells`` keeps formula-like text cells as they are."""
        if raw_cells and not self.cells:
            raise ValueError(f"The {self.label} export has no spreadsheet cells to keep raw.")
        options = {"raw_cells": raw_cells} if self.cells else {}
        return self.write(at=at, stats=stats, **options)


FORMATS: dict[str, Format] = {
    f.key: f
    for f in (
        Format(
            "jsonld",
            "JSON-LD",
            "jsonld",
            "application/ld+json; charset=utf-8",
            False,
            write_jsonld,
            "One linked-data document: concepts as SKOS concepts, edges as reified "
            "statements with PROV-O provenance, the relation vocabulary as properties. "
            "Reads into rdflib, Apache Jena or any JSON-LD processor.",
        ),
        Format(
            "csv",
            "CSV for Neo4j",
            "zip",
            "application/zip",
            True,
            write_csv_zip,
            "A zip of nodes.csv, edges.csv and relation_types.csv with neo4j-admin "
            "headers, ready for neo4j-admin database import (use --multiline-fields=true). "
            "Text cells starting with =, +, -, @, a tab or a carriage return get a leading "
            "apostrophe so a spreadsheet shows them as text; keep them raw for neo4j-admin.",
            cells=True,
        ),
        Format(
            "graphml",
            "GraphML",
            "graphml",
            "application/graphml+xml; charset=utf-8",
            False,
            write_graphml,
            "A directed multigraph with typed attributes for Gephi, yEd, Cytoscape or "
            "networkx; every edge keeps its provenance as attributes.",
        ),
        Format(
            "turtle",
            "RDF (Turtle)",
            "ttl",
            "text/turtle; charset=utf-8",
            False,
            write_turtle,
            "The whole graph as RDF: concept types as OWL classes, relations as object "
            "properties with their domain and range, attributes as datatype properties, "
            "concepts typed and named (SKOS labels), active edges and attribute values as "
            "triples, each with its provenance as a reified rdf:Statement.",
        ),
        Format(
            "skos",
            "SKOS (Turtle)",
            "skos.ttl",
            "text/turtle; charset=utf-8",
            False,
            write_skos,
            "A SKOS thesaurus: concepts with prefLabel, altLabel and definition, one "
            "concept scheme per type, relations as skos:broader, narrower or related "
            "where KG_SKOS_RELATIONS maps them, else as their own properties.",
        ),
        Format(
            "owl",
            "OWL (Turtle)",
            "owl.ttl",
            "text/turtle; charset=utf-8",
            False,
            write_owl,
            "An OWL ontology with its individuals: types as classes, relations as object "
            "properties, attributes as datatype properties, concepts as individuals of "
            "their type, edges and values as triples; no provenance.",
        ),
        Format(
            "shacl",
            "SHACL shapes (Turtle)",
            "shapes.ttl",
            "text/turtle; charset=utf-8",
            False,
            _write_shacl,
            "The shapes the ontology implies: edges fit their relation's patterns, "
            "concepts have a type where one is required, attribute values have their "
            "datatype, acyclic relations hold no cycle. Validate the turtle or owl export "
            "with them (pyshacl); manage.py validate reports the same.",
        ),
    )
}


def filename(fmt: Format, at: datetime) -> str:
    """e.g. kgreview-graph-20240501T143000Z.jsonld"""
    return f"kgreview-graph-{at.astimezone(UTC):%Y%m%dT%H%M%SZ}.{fmt.extension}"
