"""manage.py competency: a run from the command line, in words or JSON."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from kgreview.questions.models import CompetencyRun

pytestmark = pytest.mark.django_db


def test_the_command_prints_pass_and_fail_in_words(world, ask):
    ask("What should I learn before LoRA?", "concepts", ["Fine-tuning"])
    ask("What should I learn before quantization?", "concepts", ["Embeddings"])
    out = StringIO()
    call_command("competency", stdout=out)
    text = out.getvalue()
    assert "pass  #" in text and "FAIL  #" in text and "Missing 1 of 1: Embeddings." in text
    assert text.rstrip().endswith("1 of 2 passed, 1 failed.")
    assert CompetencyRun.objects.get().trigger == "cli"


def test_json_prints_one_document_and_gaps_search_the_sources(world, gap_lesson, ask):
    q = ask("What should I learn before quantization?", "concepts", ["Embeddings"])
    out = StringIO()
    call_command("competency", "--json", "--gaps", stdout=out)
    doc = json.loads(out.getvalue())
    assert doc["run"]["failed"] == 1 and doc["results"][0]["question"] == q.pk
    assert doc["results"][0]["missing"] == ["Embeddings"]
    assert doc["gap_searches"][0]["stats"]["proposals"] == 1


def test_an_unknown_question_is_an_error_in_words(world):
    with pytest.raises(CommandError, match="no competency question #99"):
        call_command("competency", "--question", "99", stdout=StringIO())
