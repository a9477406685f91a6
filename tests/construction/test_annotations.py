"""Reading other tools' annotation files into one form (``construction.annotations``,
``annotations_inception``) and planning them for the loop (``annotation_plan``)."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from construction.annotation_plan import plan_text
from construction.annotations import (
    AnnotatedText,
    AnnotationMap,
    BadAnnotations,
    Entity,
    Problem,
    Relation,
    checked_span,
    cleaned,
    is_origin_flag,
    origin_flag,
    parse_map,
    read_doccano,
    utf16_to_python,
)
from construction.annotations_inception import read_inception
from construction.annotations_labelstudio import read_labelstudio

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "annotations"


def test_cleaning_keeps_every_offset_on_its_characters():
    """CRLF, control characters and decomposed accents are cleaned piece by piece: each
    span's offsets still point at its characters."""
    text = "Cafe\u0301 one\r\ntwo\x07 three"
    spans = [(0, 5), (6, 9), (11, 14), (16, 21)]
    clean, where = cleaned(text, [o for s in spans for o in s])
    assert clean == "Café one\ntwo three"
    assert [clean[where[a] : where[b]] for a, b in spans] == ["Café", "one", "two", "three"]


def test_utf16_offsets_are_converted_and_a_split_pair_is_none():
    """An emoji is two UTF-16 units and one Python character."""
    text = "a🙂b"
    assert utf16_to_python(text, 3) == 2
    assert utf16_to_python(text, 2) is None
    assert checked_span(text, 3, 4, label_text="b") == (2, 3)
    assert checked_span(text, 2, 3, label_text="b", utf16=False) == (2, 3)


@given(st.text(max_size=40))
def test_every_character_boundary_in_utf16_units_maps_back_to_its_offset(text):
    """For any text: the UTF-16 offset of each boundary converts back to that boundary,
    and an offset between a pair's halves converts to nothing."""
    for index in range(len(text) + 1):
        units = len(text[:index].encode("utf-16-le")) // 2
        assert utf16_to_python(text, units) == index
        if index < len(text) and ord(text[index]) > 0xFFFF:
            assert utf16_to_python(text, units + 1) is None


@pytest.mark.parametrize(
    ("start", "end", "words"),
    [
        ("1", 2, "not whole numbers"),
        (True, 2, "not whole numbers"),
        (5, 2, "not a span"),
        (0, 99, "run past the end of the text (5 characters)"),
    ],
)
def test_unusable_offsets_are_said_in_words(start, end, words):
    """Offsets of the wrong type or outside the text are refused with the reason."""
    found = checked_span("hello", start, end)
    assert isinstance(found, str) and words in found


def test_a_label_text_that_differs_from_the_text_at_its_offsets_is_refused():
    """Label Studio's own copy of the span must be what the offsets cover."""
    found = checked_span("hello world", 0, 5, label_text="world")
    assert found == 'its text "world" is not the text at 0–5 ("hello")'


def test_origin_flags_name_tool_and_annotator_and_only_those_are_filterable():
    """The flag keeps letters, digits and . _ - @ of the annotator, in lower case."""
    assert origin_flag("labelstudio", "Alice Smith <a@x.org>") == (
        "annotator:labelstudio:alice-smith-a@x.org"
    )
    assert origin_flag("doccano", "  ") == "annotator:doccano:unknown"
    assert is_origin_flag("annotator:doccano:bob")
    assert not is_origin_flag("annotator:paint:bob")
    assert not is_origin_flag("annotator:doccano:Bob")
    assert not is_origin_flag("contradiction")


def test_mapping_files_are_read_or_refused_in_words():
    """Relations and entities map labels to keys; anything else is refused."""
    mapping = parse_map(b'{"relations": {"needs": "prerequisite"}, "entities": {"C": ""}}')
    assert mapping.relations == {"needs": "prerequisite"} and mapping.entities == {"C": ""}
    assert parse_map(None).entities is None
    for raw, words in [
        (b"[1]", "one JSON object"),
        (b'{"relations": {"a": 1}}', "maps labels to keys"),
        (b'{"relations": {"a": " "}}', "is mapped to no key"),
        (b"{", "not JSON"),
    ]:
        with pytest.raises(BadAnnotations, match=words):
            parse_map(raw)


def test_label_studio_cancelled_annotations_and_predictions_are_not_read():
    """Only a person's finished annotations count; the cancelled one is reported as
    skipped."""
    task = {
        "id": 1,
        "data": {"text": "Embeddings help."},
        "annotations": [
            {"id": 1, "was_cancelled": True, "completed_by": 1, "result": []},
            {"id": 2, "completed_by": 2, "result": []},
        ],
        "predictions": [{"result": [{"type": "labels", "value": {"start": 0, "end": 10}}]}],
    }
    texts, problems = read_labelstudio(json.dumps([task]).encode())
    assert [t.annotator for t in texts] == ["user 2"]
    assert [(p.where, p.skipped) for p in problems] == [("task 1, annotation 1", True)]


def test_label_studio_bidirectional_relation_reads_both_ways():
    """direction "bi" is a relation each way."""
    result = [
        {"id": "a", "type": "labels", "value": {"start": 0, "end": 1, "labels": ["X"]}},
        {"id": "b", "type": "labels", "value": {"start": 2, "end": 3, "labels": ["X"]}},
        {"type": "relation", "from_id": "a", "to_id": "b", "direction": "bi", "labels": ["r"]},
    ]
    task = {"data": {"text": "a b"}, "annotations": [{"completed_by": 1, "result": result}]}
    (text,), _ = read_labelstudio(json.dumps(task).encode())
    assert [(r.from_id, r.to_id) for r in text.relations] == [("a", "b"), ("b", "a")]


def test_doccano_lines_of_the_wrong_shape_are_reported_and_the_rest_read():
    """A line that is JSON but no example, or with entities that are not a list."""
    raw = b'{"text": "ok", "entities": [], "relations": []}\n[1, 2]\n{"text": "x", "entities": 3}\n'
    texts, problems = read_doccano(raw, annotator="eve")
    assert len(texts) == 1 and texts[0].annotator == "eve"
    assert [p.where for p in problems] == ["line 2", "line 3"]


def test_plan_reports_relations_whose_spans_were_left_out():
    """A relation joining a span that was left out (or never there) is said so."""
    item = AnnotatedText(
        where="line 1",
        name="1",
        title="t",
        text="Embeddings precede search.",
        annotator="bob",
        entities=[Entity("1", 0, 10, "C"), Entity("2", 19, 25, "Date")],
        relations=[Relation("9", "1", "2", "needs"), Relation("8", "1", "77", "needs")],
    )
    plan = plan_text(
        item,
        AnnotationMap(relations={"needs": "prerequisite"}, entities={"C": ""}),
        tool="doccano",
        confidence=0.9,
    )
    assert not isinstance(plan, Problem)
    words = [str(p) for p in plan.problems]
    assert 'line 1, span 2: left out: its label "Date" has no mapping' in words[0]
    assert "relation 9: left out: it joins span 2" in words[1]
    assert "relation 8: left out: it joins span 77" in words[2]
    assert plan.extraction.candidates == ()
    assert plan.unmapped == {"span label “Date”": 1}


def test_inception_zip_export_names_each_annotator_by_its_file():
    """INCEpTION's export ZIP: the type system inside, one XMI per annotator."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.write(FIXTURES / "TypeSystem.xml", "TypeSystem.xml")
        archive.write(FIXTURES / "inception.xmi", "annotation/search-lesson.txt/dave.xmi")
        archive.writestr("annotation/search-lesson.txt/erin.xmi", "<not xmi")
    texts, problems = read_inception(buffer.getvalue(), filename="export.zip")
    assert [t.annotator for t in texts] == ["dave"]
    assert len(texts[0].entities) == 5 and len(texts[0].relations) == 2
    assert problems[0].where == "annotation/search-lesson.txt/erin.xmi"


def test_inception_zip_that_unpacks_to_far_more_is_refused():
    """A ZIP bomb is refused before anything is unpacked."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("a.xmi", b"\0" * 5_000_000)
    with pytest.raises(BadAnnotations, match="unpacks to far more"):
        read_inception(buffer.getvalue(), filename="bomb.zip")


def test_inception_cas_json_carries_its_own_type_system():
    """UIMA CAS JSON needs no type system beside it."""
    from cassis import load_cas_from_xmi, load_typesystem

    types = load_typesystem(io.BytesIO((FIXTURES / "TypeSystem.xml").read_bytes()))
    cas = load_cas_from_xmi(io.BytesIO((FIXTURES / "inception.xmi").read_bytes()), typesystem=types)
    texts, _ = read_inception(cas.to_json().encode(), filename="lesson.json", annotator="fay")
    reranker = next(e for e in texts[0].entities if texts[0].text[e.start : e.end] == "reranker")
    assert reranker.label == "Concept" and texts[0].annotator == "fay"


def test_inception_xmi_without_its_type_system_is_refused_in_words():
    """An XMI alone cannot be read: the words say what to give."""
    with pytest.raises(BadAnnotations, match="--typesystem"):
        read_inception((FIXTURES / "inception.xmi").read_bytes(), filename="x.xmi")


def test_a_span_that_splits_a_letter_from_its_accent_is_left_out_in_words():
    """An offset between "e" and its combining accent has no clean form: that text is
    reported, never stored with offsets pointing elsewhere."""
    item = AnnotatedText(
        where="line 1",
        name="1",
        title="t",
        text="Cafe\u0301 au lait",
        annotator="bob",
        entities=[Entity("1", 0, 4, "C")],
    )
    plan = plan_text(item, AnnotationMap(), tool="doccano", confidence=0.9)
    assert plan == Problem(
        "line 1", "left out: an offset falls between characters that belong together"
    )


# --- Label Studio's other export forms, and crafted files --------------------------------


def _task(text, result, **annotation):
    """One Label Studio task, as its JSON export writes it."""
    return {
        "id": 1,
        "data": {"text": text},
        "annotations": [{"id": 5, "completed_by": 1, "result": result, **annotation}],
        "predictions": [],
    }


def _region(rid, start, end, label="C", **extra):
    value = {"start": start, "end": end, "labels": [label], **extra}
    return {"id": rid, "from_name": "label", "to_name": "text", "type": "labels", "value": value}


def test_label_studio_json_min_reads_spans_and_says_it_carries_no_relations():
    """JSON-MIN: one record per annotation, the regions under the tag's name, the
    annotator an email or a user id; a task nobody labelled is skipped; relations are not
    in that export, which the reader says once."""
    texts, problems = read_labelstudio((FIXTURES / "labelstudio_min.json").read_bytes())
    assert [(t.where, t.annotator) for t in texts] == [
        ("task 11, annotation 101", "alice@example.org"),
        ("task 12, annotation 102", "user 7"),
    ]
    first = texts[0]
    assert [first.text[e.start : e.end] for e in first.entities] == [
        "Embeddings",
        "vector search",
        "Retrieval-augmented generation",
    ]
    assert first.relations == [] and first.name == "task-11"
    assert [(p.where, p.skipped) for p in problems] == [("task 13", True), ("the file", True)]
    assert "carries no relations" in problems[1].words


def test_label_studio_text_given_by_url_is_refused_in_words_without_a_loader():
    """A task whose text is a URL or an upload path is not guessed at, nor downloaded."""
    texts, problems = read_labelstudio((FIXTURES / "labelstudio_url.json").read_bytes())
    assert texts == []
    words = {p.where: p.words for p in problems}
    assert (
        'its text is not in the export but at "/data/upload/4/5e3c1f0a-lesson.txt"'
        in (words["task 21"])
    )
    assert "--texts DIR (nothing is downloaded)" in words["task 21"]
    assert 'at "https://example.org/texts/elsewhere.txt"' in words["task 22"]


def test_label_studio_text_given_by_url_is_read_through_the_loader():
    """With a loader the text is read by its reference; offsets count code points (what
    Label Studio stores today) even after an emoji and with no copy of the span's text;
    the cancelled annotation, the predictions and the task only a model labelled are
    reported as skipped, never read."""
    asked = []

    def load(reference):
        asked.append(reference)
        if reference.endswith("lesson.txt"):
            return (FIXTURES / "texts" / "lesson.txt").read_text(encoding="utf-8")
        raise LookupError("is not in the folder")

    texts, problems = read_labelstudio(
        (FIXTURES / "labelstudio_url.json").read_bytes(), load_text=load
    )
    assert asked == [
        "/data/upload/4/5e3c1f0a-lesson.txt",
        "https://example.org/texts/elsewhere.txt",
    ]
    (lesson,) = texts
    assert lesson.annotator == "alice@example.org"
    assert [lesson.text[e.start : e.end] for e in lesson.entities] == [
        "Chunking",
        "documents",
        "tokenization",
        "embeddings",
    ]
    assert [(r.from_id, r.to_id, r.label) for r in lesson.relations] == [
        ("c3", "c4", "needed before")
    ]
    reported = [(p.where, p.skipped, p.words) for p in problems]
    assert reported[0][:2] == ("task 21, annotation 202", True)
    assert "skipped (cancelled) by bob@example.org" in reported[0][2]
    assert reported[1][:2] == ("task 22", False) and "is not in the folder" in reported[1][2]
    assert reported[2] == (
        "task 23",
        True,
        "has only predictions (a model's, not a person's), which are not imported",
    )


def test_label_studio_utf16_offsets_are_read_when_its_copy_of_the_text_says_so():
    """An export from before Label Studio counted code points: its offsets after an emoji
    are UTF-16 units, and its copy of the span's text picks that reading."""
    text = "Search 🔍 needs embeddings."
    old = _region("a", 16, 26, text="embeddings")  # UTF-16 units; code points are 15–25
    new = _region("b", 15, 25)  # code points, no copy of the text
    (item,), problems = read_labelstudio(json.dumps([_task(text, [old, new])]).encode())
    assert problems == []
    assert [text[e.start : e.end] for e in item.entities] == ["embeddings", "embeddings"]


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b"", "the file is empty"),
        (b"  \n\t", "the file is empty"),
        (b"\xef\xbb\xbf[\x00]", "NUL bytes"),
        ('[{"data": {"text": "caf\u00e9"}}]'.encode("latin-1"), "not UTF-8 text"),
        (b"[" * 100_000 + b"]" * 100_000, "nests its JSON too deep"),
        (b'{"tasks": [], "total": 3}', "one JSON object with the keys tasks, total"),
        (b"42", "a list of tasks"),
        (b'[{"id": 1, "end": ' + b"9" * 5000 + b"}]", "not JSON"),
    ],
)
def test_label_studio_files_that_are_no_export_are_refused_whole_in_words(raw, words):
    """Crafted files: each refused with its reason, nothing read."""
    with pytest.raises(BadAnnotations, match=words):
        read_labelstudio(raw)


def test_a_file_with_too_many_regions_is_refused_before_it_is_parsed(monkeypatch):
    """The item count is taken on the bytes: a huge export never reaches the parser."""
    import construction.annotations as module

    monkeypatch.setattr(module, "MAX_ITEMS", 3)
    raw = json.dumps([_task("a b c d", [_region(str(i), i, i + 1) for i in range(4)])])
    with pytest.raises(BadAnnotations, match="about 4 labelled spans and relations; at most 3"):
        read_labelstudio(raw.encode())
    with pytest.raises(BadAnnotations, match="at most 3"):
        read_doccano(b'{"text": "x", "entities": [' + b'{"start_offset": 0},' * 4 + b"{}]}")


def test_label_studio_crafted_regions_are_left_out_each_with_its_reason():
    """Offsets reversed, out of range, huge, fractional or splitting an emoji's UTF-16
    pair; a duplicate region id; an HTML region; a relation naming no region: each left
    out in words of bounded length, the good region kept."""
    text = "ab 🙂 embeddings"
    result = [
        _region("ok", 5, 15),
        _region("reversed", 9, 5),
        _region("past", 5, 99),
        _region("huge", 10**40, 10**41),
        _region("fraction", 5.0, 15.0),
        _region("split", 4, 6, text="embeddings"),  # UTF-16 4 is inside 🙂's pair
        _region("ok", 0, 2),
        {
            "id": "html",
            "type": "hypertextlabels",
            "value": {"start": "/p[1]", "end": "/p[1]", "startOffset": 0, "endOffset": 2},
        },
        {"type": "relation", "from_id": ["ok"], "to_id": "ok", "labels": ["r"]},
        {"type": "relation", "from_id": "ok", "to_id": "gone", "labels": ["r"]},
    ]
    (item,), problems = read_labelstudio(json.dumps([_task(text, result)]).encode())
    assert [(e.id, text[e.start : e.end]) for e in item.entities] == [("ok", "embeddings")]
    words = {p.where.rsplit(", ", 1)[1]: p.words for p in problems}
    assert "are not a span" in words["region reversed"]
    assert "run past the end of the text (15 characters)" in words["region past"]
    assert len(words["region huge"]) < 120 and "run past the end" in words["region huge"]
    assert "not whole numbers" in words["region fraction"]
    assert 'its text "embeddings" is not the text at 4–6' in words["region split"]
    assert "another region of this annotation has the same id" in words["region ok"]
    assert "marks HTML" in words["region html"]
    assert "from_id and to_id name no regions" in words["relation 9"]
    # The relation to a region that is not there is the plan's to report.
    assert [(r.from_id, r.to_id) for r in item.relations] == [("ok", "gone")]


def test_a_lone_utf16_surrogate_in_a_text_becomes_a_replacement_character():
    """JSON can escape half of a pair ("\\ud83d" alone), which is no character and no
    database stores: it becomes U+FFFD, one character for one, so offsets hold."""
    raw = b'[{"id": 1, "data": {"text": "a \\ud83d embeddings"}, "annotations": [{"result": ['
    raw += json.dumps(_region("e", 4, 14)).encode() + b"]}]}]"
    (item,), problems = read_labelstudio(raw)
    assert item.text == "a \ufffd embeddings" and problems == []
    assert item.text[4:14] == "embeddings"
    item.text.encode("utf-8")  # storable


def test_doccano_crafted_entities_are_left_out_each_with_its_reason():
    """Reversed and huge offsets, a duplicate entity id, a relation with no usable ends;
    a line nested too deep is one bad line, not a crash."""
    line = {
        "id": 1,
        "text": "Tokenization comes before embeddings.",
        "entities": [
            {"id": 1, "start_offset": 0, "end_offset": 12, "label": "C"},
            {"id": 2, "start_offset": 36, "end_offset": 26, "label": "C"},
            {"id": 3, "start_offset": 0, "end_offset": 10**50, "label": "C"},
            {"id": 1, "start_offset": 26, "end_offset": 36, "label": "C"},
        ],
        "relations": [{"id": 9, "from_id": None, "to_id": 1, "type": "r"}],
    }
    raw = json.dumps(line).encode() + b"\n" + b"[" * 50_000 + b"]" * 50_000 + b"\n"
    (item,), problems = read_doccano(raw)
    assert [(e.id, e.start, e.end) for e in item.entities] == [("1", 0, 12)]
    words = [f"{p.where}: {p.words}" for p in problems]
    assert "entity 2: left out: its offsets 36–26 are not a span" in words[0]
    assert "entity 3: left out" in words[1] and len(words[1]) < 160
    assert "entity 1: left out: another entity of this line has the same id" in words[2]
    assert "relation 1: left out: from_id and to_id name no entities" in words[3]
    assert words[4].startswith("line 2: is not JSON")


def test_doccano_empty_file_is_refused_in_words():
    with pytest.raises(BadAnnotations, match="the file is empty"):
        read_doccano(b"\n\n")


def test_inception_xmi_of_an_unknown_type_system_is_refused_in_words():
    """An XMI whose types its type system does not declare is no CAS kgreview can read."""
    xmi = (FIXTURES / "inception.xmi").read_bytes()
    other = (
        b'<?xml version="1.0" encoding="UTF-8"?><typeSystemDescription '
        b'xmlns="http://uima.apache.org/resourceSpecifier"><types><typeDescription>'
        b"<name>org.example.Other</name><supertypeName>uima.tcas.Annotation</supertypeName>"
        b"</typeDescription></types></typeSystemDescription>"
    )
    with pytest.raises(BadAnnotations, match="not UIMA CAS XMI that its type system explains"):
        read_inception(xmi, filename="x.xmi", typesystem=other)
