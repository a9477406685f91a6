"""CSV cells that a spreadsheet would run as formulas are neutralised, unless asked raw."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from kgreview.exports import writers
from kgreview.exports.writers import neo4j_csv
from tests.exports.support import csv_rows

pytestmark = pytest.mark.django_db

FORMULAS = [
    "=cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "+1+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
]


def zip_of(*, raw_cells: bool = False) -> bytes:
    return b"".join(neo4j_csv.write_csv_zip(at=timezone.now(), raw_cells=raw_cells))


def rows_by_id(data: bytes) -> dict[str, dict]:
    return {r["conceptId:long"]: r for r in csv_rows(data, "nodes.csv")}


@pytest.mark.parametrize("formula", FORMULAS[:4])
def test_a_concept_name_that_is_a_formula_gets_a_leading_apostrophe(f, formula):
    """Every formula start a name can have (=, +, -, @) is written as text."""
    concept = f.concept(formula)
    row = rows_by_id(zip_of())[str(concept.pk)]
    assert row["name"] == "'" + formula


@pytest.mark.parametrize("formula", FORMULAS[:4])
def test_a_reason_that_starts_like_a_formula_gets_a_leading_apostrophe(f, formula):
    """Free text is neutralised like names."""
    edge = f.edge(f.concept("Alpha"), f.concept("Beta"), reason=formula)
    (row,) = [r for r in csv_rows(zip_of(), "edges.csv") if r["edgeId:long"] == str(edge.pk)]
    assert row["reason"] == "'" + formula


@pytest.mark.parametrize("formula", FORMULAS)
def test_every_text_cell_starting_like_a_formula_is_neutralised(formula):
    """The services trim leading tabs and line breaks, but a cell never relies on that."""
    assert neo4j_csv._cell(formula) == "'" + formula
    assert neo4j_csv._cell(formula, raw=True) == formula


def test_aliases_descriptions_reasons_and_quotes_are_neutralised_too(f):
    """The guard is every text cell's, not only the name's."""
    a = f.concept("Alpha", aliases=["=HYPERLINK(1)"], description="+danger")
    b = f.concept("Beta")
    edge = f.edge(a, b, reason="@SUM(A1:A9)")
    data = zip_of()
    node = rows_by_id(data)[str(a.pk)]
    assert node["aliases:string[]"].startswith("'=HYPERLINK(1)")
    assert node["description"] == "'+danger"
    (row,) = [r for r in csv_rows(data, "edges.csv") if r["edgeId:long"] == str(edge.pk)]
    assert row["reason"] == "'@SUM(A1:A9)"


def test_numbers_booleans_and_instants_are_not_touched(f):
    """Typed columns stay typed: a negative weight would be a number, never text."""
    a, b = f.concept("Alpha"), f.concept("Beta")
    edge = f.edge(a, b, reason="Plain words.")
    (row,) = [r for r in csv_rows(zip_of(), "edges.csv") if r["edgeId:long"] == str(edge.pk)]
    assert row["edgeId:long"] == str(edge.pk)
    assert row["symmetric:boolean"] in {"true", "false"}
    assert float(row["confidence:double"]) == edge.confidence
    assert row["recordedAt:datetime"][0].isdigit() and row["reason"] == "Plain words."
    assert neo4j_csv._cell(-1.5) == "-1.5" and neo4j_csv._cell(-3) == "-3"


def test_a_name_with_a_formula_sign_inside_is_left_as_it_is(f):
    """Only the first character counts: "C++ = fun" and "e-mail" are ordinary names."""
    c = f.concept("C++ = fun")
    assert rows_by_id(zip_of())[str(c.pk)]["name"] == "C++ = fun"


@pytest.mark.parametrize("formula", FORMULAS[:4])
def test_raw_cells_keep_formulas_as_they_are_for_neo4j_admin(f, formula):
    """With raw cells the zip holds the names exactly, as neo4j-admin should store them."""
    concept = f.concept(formula)
    assert rows_by_id(zip_of(raw_cells=True))[str(concept.pk)]["name"] == formula


def test_the_command_neutralises_by_default_and_keeps_raw_with_the_flag(f, tmp_path):
    concept = f.concept("=1+1")
    call_command("export", "--format", "csv", "--out", str(tmp_path / "safe"), stderr=io.StringIO())
    call_command(
        "export",
        "--format",
        "csv",
        "--raw-cells",
        "--out",
        str(tmp_path / "raw"),
        stderr=io.StringIO(),
    )
    safe = (tmp_path / "safe" / "nodes.csv").read_text()
    raw = (tmp_path / "raw" / "nodes.csv").read_text()
    assert f"{concept.pk},'=1+1," in safe
    assert f"{concept.pk},=1+1," in raw


def test_the_command_refuses_raw_cells_for_a_format_without_cells():
    with pytest.raises(CommandError, match="--raw-cells is for the csv export"):
        call_command("export", "--format", "jsonld", "--raw-cells", stdout=io.StringIO())


def test_a_format_without_cells_refuses_raw_cells_in_code():
    with pytest.raises(ValueError, match="no spreadsheet cells"):
        writers.FORMATS["graphml"].stream(at=timezone.now(), raw_cells=True)


@pytest.fixture
def viewer(f) -> Client:
    client = Client()
    client.force_login(f.user(role="viewer"))
    return client


def downloaded_names(response) -> set[str]:
    data = b"".join(response.streaming_content)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.testzip() is None
    return {r["name"] for r in csv_rows(data, "nodes.csv")}


def test_the_download_neutralises_by_default_and_keeps_raw_when_ticked(viewer, f):
    f.concept("@SUM(9)")
    url = reverse("exports:download")
    assert "'@SUM(9)" in downloaded_names(viewer.get(url, {"format": "csv"}))
    raw = viewer.get(url, {"format": "csv", "raw_cells": "on"})
    assert "@SUM(9)" in downloaded_names(raw)


def test_raw_cells_with_another_format_is_a_400_in_words(viewer):
    response = viewer.get(reverse("exports:download"), {"format": "jsonld", "raw_cells": "on"})
    assert response.status_code == 400
    assert "Raw cells are for the CSV export" in response.content.decode()


def test_the_page_explains_the_guard_and_offers_raw_cells(viewer):
    page = viewer.get(reverse("exports:home")).content.decode()
    assert 'name="raw_cells"' in page and "leading apostrophe" in page
