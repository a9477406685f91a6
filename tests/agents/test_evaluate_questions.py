"""manage.py evaluate --questions FILE: the ask loop measured against labelled questions
(names by alias count as the concept), as text or JSON; bad files are refused in words."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tests import ask_world

pytestmark = pytest.mark.django_db

ROWS = [
    {"question": "What is part of the transformer?", "family": "parts",
     "concepts": ["Attention", "Positional encoding"]},
    {"question": "What should I learn before LoRA?", "family": "prerequisites",
     "concepts": ["Fine-tuning", "Transformer", "Attention", "Embeddings", "Tokenization",
                  "Quantization"]},
    {"question": "How is retrieval-augmented generation connected to embeddings?",
     "path": ["RAG", "Embeddings"]},
    {"question": "Is attention a prerequisite for the transformer?", "yes": True},
    {"question": "What is quantum networking part of?", "status": "not_understood"},
]  # fmt: skip


@pytest.fixture
def questions(tmp_path):
    ask_world.build()
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n", encoding="utf-8")
    return path


def run(*args) -> str:
    out = StringIO()
    call_command("evaluate", *args, stdout=out)
    return out.getvalue()


def test_json_reports_every_measure(questions):
    report = json.loads(run("--questions", str(questions), "--json"))
    assert report["questions"] == 5 and report["passed"] == 4
    assert report["set_recall"] == round(7 / 8, 4) and report["set_precision"] == 1.0
    assert report["path_recall"] == 1.0
    assert report["yes_no_accuracy"] == 1.0 and report["status_accuracy"] == 1.0
    assert report["deterministic"] == 1.0
    assert report["latency_ms"]["p95"] >= report["latency_ms"]["p50"] > 0
    assert report["families"]["prerequisites"]["passed"] == 0
    assert report["misses"][0]["misses"] == ["missing quantization"]


def test_text_names_the_measures_and_the_misses(questions):
    text = run("--questions", str(questions))
    assert "set recall 0.875  set precision 1.000  path recall 1.000" in text
    assert "miss: What should I learn before LoRA? — missing quantization" in text


def test_a_bad_file_is_refused_in_words(tmp_path, db):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "x", "yes": "perhaps"}\n', encoding="utf-8")
    with pytest.raises(CommandError, match="line 1: .*true or false"):
        run("--questions", str(bad))
    with pytest.raises(CommandError, match="Cannot read"):
        run("--questions", str(tmp_path / "missing.jsonl"))
