"""manage.py export: every format, --as-of, --out, stdout kept clean, errors in words."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import timedelta

import networkx as nx
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from tests.exports.support import backdate, csv_rows, rdf_of

pytestmark = pytest.mark.django_db


class BinaryStdout(io.TextIOWrapper):
    """A text stdout with a binary buffer underneath, as a real redirected stdout has."""

    def __init__(self, *, tty: bool = False) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8")
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty

    def data(self) -> bytes:
        self.flush()
        return self.buffer.getvalue()


def run(*args: str, stdout=None) -> tuple[str, str]:
    out, err = stdout or io.StringIO(), io.StringIO()
    call_command("export", *args, stdout=out, stderr=err)
    return (out.getvalue() if isinstance(out, io.StringIO) else ""), err.getvalue()


def test_jsonld_to_stdout_is_the_document_and_nothing_else(graph):
    """stdout parses as JSON (and as RDF); the counts go to stderr."""
    out, err = run("--format", "jsonld")
    doc = json.loads(out)
    assert sum(1 for i in doc["@graph"] if i["@type"] == "rdf:Statement") == 4
    assert len(rdf_of(out)) > 0
    assert "Exported 5 concepts, 4 edges" in err and "to stdout" in err


def test_jsonld_to_a_real_binary_stdout_is_utf8(f):
    """Written through stdout's byte buffer, non-ASCII names come out as UTF-8."""
    f.concept("Café ünïcode")
    stdout = BinaryStdout()
    run("--format", "jsonld", stdout=stdout)
    doc = json.loads(stdout.data().decode("utf-8"))
    assert any(i.get("prefLabel") == "Café ünïcode" for i in doc["@graph"])


def test_graphml_to_an_out_file(graph, tmp_path):
    """--out FILE writes GraphML that networkx reads with the graph's counts."""
    path = tmp_path / "graph.graphml"
    out, err = run("--format", "graphml", "--out", str(path))
    assert out == ""
    g = nx.read_graphml(path)
    assert (g.number_of_nodes(), g.number_of_edges()) == (5, 4)
    assert str(path) in err
    assert [p.name for p in tmp_path.iterdir()] == ["graph.graphml"]  # no leftovers


def test_out_into_an_existing_directory_names_the_file_by_format_and_instant(graph, tmp_path):
    """Given a directory, jsonld goes into kgreview-graph-<instant>.jsonld inside it."""
    run("--format", "jsonld", "--as-of", "2030-01-02T03:04:05Z", "--out", str(tmp_path))
    (path,) = tmp_path.iterdir()
    assert path.name == "kgreview-graph-20300102T030405Z.jsonld"
    assert json.loads(path.read_text())["@graph"][0]["asOf"] == "2030-01-02T03:04:05Z"


def test_csv_to_an_out_directory_writes_the_three_neo4j_files(graph, tmp_path):
    """--out DIR (created if missing) gets nodes.csv, edges.csv and relation_types.csv."""
    target = tmp_path / "neo4j" / "import"
    run("--format", "csv", "--out", str(target))
    assert sorted(p.name for p in target.iterdir()) == [
        "edges.csv",
        "nodes.csv",
        "relation_types.csv",
    ]
    nodes = (target / "nodes.csv").read_bytes()
    assert nodes.startswith(b":ID(Concept),conceptId:long,name,aliases:string[]")
    assert nodes.count(b"\r\n") == 6  # header and five concepts
    assert (target / "edges.csv").read_bytes().count(b"\r\n") == 5


def test_csv_to_a_zip_path(graph, tmp_path):
    """--out FILE.zip writes the zip instead of a directory."""
    path = tmp_path / "graph.zip"
    run("--format", "csv", "--out", str(path))
    data = path.read_bytes()
    assert len(csv_rows(data, "nodes.csv")) == 5 and len(csv_rows(data, "edges.csv")) == 4


def test_csv_to_stdout_writes_the_zip_to_the_binary_buffer(graph):
    """Redirected stdout receives the zip bytes and nothing else."""
    stdout = BinaryStdout()
    _, err = run("--format", "csv", stdout=stdout)
    data = stdout.data()
    assert zipfile.is_zipfile(io.BytesIO(data))
    assert len(csv_rows(data, "edges.csv")) == 4
    assert "Exported 5 concepts, 4 edges, 6 relation types" in err


def test_csv_to_a_terminal_or_a_text_only_stdout_is_refused(graph):
    """A zip is not for a terminal, and a stream without bytes cannot take it."""
    with pytest.raises(CommandError, match="redirect stdout"):
        run("--format", "csv", stdout=BinaryStdout(tty=True))
    with pytest.raises(CommandError, match="--out DIR"):
        run("--format", "csv")


def test_csv_out_onto_an_existing_file_is_refused(graph, tmp_path):
    """csv writes three files: an existing plain file as --out is an error, left untouched."""
    path = tmp_path / "graph.csv"
    path.write_text("keep me")
    with pytest.raises(CommandError, match="directory or a path ending in .zip"):
        run("--format", "csv", "--out", str(path))
    assert path.read_text() == "keep me"


def test_out_into_a_missing_directory_is_refused_in_words(graph, tmp_path):
    """A file path whose directory does not exist is a CommandError naming it."""
    with pytest.raises(CommandError, match="does not exist"):
        run("--format", "graphml", "--out", str(tmp_path / "nope" / "g.graphml"))


def test_as_of_exports_the_graph_at_that_instant(f):
    """An edge recorded after --as-of is left out; one recorded before is in."""
    a, b, c = f.concept("A"), f.concept("B"), f.concept("C")
    for x in (a, b, c):
        backdate(x, "created_at", days=10)
    old = f.edge(a, b)
    backdate(old, "recorded_at", "valid_at", days=10)
    f.edge(b, c)
    then = (timezone.now() - timedelta(days=5)).date().isoformat()

    out, err = run("--format", "jsonld", "--as-of", then)
    statements = [i for i in json.loads(out)["@graph"] if i["@type"] == "rdf:Statement"]
    assert [s["identifier"] for s in statements] == [old.pk]
    assert "Exported 3 concepts, 1 edges" in err
    now_out, _ = run("--format", "jsonld")
    assert sum(1 for i in json.loads(now_out)["@graph"] if i["@type"] == "rdf:Statement") == 2


def test_a_future_as_of_is_fine(graph):
    """An instant in the future exports the graph as it stands."""
    _, err = run("--format", "graphml", "--as-of", "2999-01-01T00:00:00+00:00")
    assert "Exported 5 concepts, 4 edges" in err and "2999-01-01T00:00:00Z" in err


@pytest.mark.parametrize("bad", ["yesterday", "2024-02-30", "12/05/2024"])
def test_a_bad_as_of_is_a_command_error_in_words(bad, tmp_path):
    """An unreadable instant stops the command with an example of what works; nothing is written."""
    with pytest.raises(CommandError) as info:
        run("--format", "jsonld", "--as-of", bad, "--out", str(tmp_path / "g.jsonld"))
    message = str(info.value)
    assert message.startswith("--as-of:") and bad in message and "2024-05-01T14:30" in message
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_format_is_refused():
    """--format takes only jsonld, csv or graphml."""
    with pytest.raises(CommandError, match="invalid choice"):
        run("--format", "rdfxml")


def test_help_explains_formats_stdout_and_as_of():
    """--help tells how csv goes to stdout and what --as-of accepts."""
    from kgreview.exports.management.commands.export import Command

    parser = Command().create_parser("manage.py", "export")
    text = parser.format_help()
    assert "{csv,graphml,jsonld,owl,shacl,skos,turtle}" in text
    assert "> graph.zip" in text and "ISO 8601" in text and "--out" in text
