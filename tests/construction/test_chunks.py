"""Chunking long documents: bounded, covering, split at headings, stable under edits."""

from __future__ import annotations

import random
import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from construction.chunks import Chunk, chunk_document, estimate_tokens
from construction.sentences import sentences
from construction.types import Section

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
LESSONS = sorted(CORPUS.glob("*.md"))
FENCE = re.compile(r"^ {0,3}(```|~~~)")
ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --- Helpers ------------------------------------------------------------------------------


def strip_front_matter(text: str) -> str:
    if text.startswith("---\n"):
        return text[text.index("\n---\n", 4) + 5 :]
    return text


def markdown_sections(text: str) -> list[Section]:
    """ATX headings outside code fences, each governing the text up to the next heading
    of the same or a higher level."""
    heads: list[tuple[int, int, str]] = []
    pos, fenced = 0, False
    for line in text.splitlines(keepends=True):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and (match := ATX.match(line.rstrip("\r\n"))):
            heads.append((pos, len(match.group(1)), match.group(2).strip()))
        pos += len(line)
    out, stack = [], []
    for i, (start, level, title) in enumerate(heads):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        end = next((s for s, lv, _ in heads[i + 1 :] if lv <= level), len(text))
        out.append(Section(tuple(t for _, t in stack), start, end, level))
    return out


def lesson(path: Path) -> str:
    return strip_front_matter(path.read_text(encoding="utf-8"))


def chunks_of(text: str, **kwargs) -> list[Chunk]:
    return chunk_document(text, sections=markdown_sections(text), **kwargs)


def assert_well_formed(text: str, chunks: list[Chunk], max_tokens: int) -> None:
    """Offsets index the text, bodies tile its non-space characters, the bound holds."""
    previous_end = 0
    for i, chunk in enumerate(chunks):
        assert chunk.index == i
        assert 0 <= chunk.start <= chunk.body_start < chunk.end <= len(text)
        assert chunk.text == text[chunk.start : chunk.end]
        assert chunk.tokens == estimate_tokens(chunk.text) <= max_tokens
        assert not text[previous_end : chunk.body_start].strip()
        assert chunk.body_start >= previous_end
        previous_end = chunk.end
    assert not text[previous_end:].strip()
    bodies = "".join(text[c.body_start : c.end] for c in chunks)
    assert "".join(bodies.split()) == "".join(text.split())


def section_at(sections: list[Section], pos: int) -> tuple[str, ...]:
    around = [s for s in sections if s.start <= pos < s.end]
    return max(around, key=lambda s: s.level).path if around else ()


def changed(before: list[Chunk], after: list[Chunk]) -> int:
    """How many chunk texts differ (compared as multisets, offsets ignored)."""
    old, new = Counter(c.text for c in before), Counter(c.text for c in after)
    return max(sum((old - new).values()), sum((new - old).values()))


# --- Generated long documents ---------------------------------------------------------------

TOPIC_WORDS = """model token vector index query document layer weight graph node edge cache
batch prompt answer retrieval embedding attention memory agent tool schema network training
data loss gradient sample value key matrix search score rank chunk context window output input"""
GLUE_WORDS = "the a of to and in is that for with as on by it this from"
VOCABULARY, GLUE = TOPIC_WORDS.split(), GLUE_WORDS.split()


def sentence(rng: random.Random) -> str:
    words = [
        rng.choice(VOCABULARY if rng.random() < 0.5 else GLUE) for _ in range(rng.randint(6, 28))
    ]
    return " ".join(words).capitalize() + rng.choice("....?!")


def paragraph(rng: random.Random) -> str:
    return " ".join(sentence(rng) for _ in range(rng.randint(2, 8)))


@cache
def book(layout: str, pages: int = 200, seed: int = 7) -> str:
    """About 400 words a page: headed chapters and sections, bare paragraphs, or PDF lines."""
    rng = random.Random(seed)
    parts: list[str] = []
    for page in range(pages):
        if layout == "headings" and page % 10 == 0:
            parts.append(f"# Chapter {page // 10 + 1}")
        if layout == "headings" and page % 3 == 0:
            parts.append(f"## Section {page // 3 + 1}")
        words = 0
        while words < 400:
            parts.append(paragraph(rng))
            words += len(parts[-1].split())
    return ("\n" if layout == "lines" else "\n\n").join(parts) + "\n"


def edit(text: str, layout: str, where: float, kind: str, seed: int) -> str:
    """Grow, shrink or rewrite one paragraph (one sentence more, less or different)."""
    rng = random.Random(seed)
    separator = "\n" if layout == "lines" else "\n\n"
    paragraphs = text.split(separator)
    prose = [i for i, p in enumerate(paragraphs) if p and not p.startswith("#")]
    i = prose[round(where * (len(prose) - 1))]
    parts = re.split(r"(?<=[.?!]) ", paragraphs[i])
    at = rng.randrange(len(parts))
    if kind == "grow":
        parts.insert(at, sentence(rng))
    elif kind == "shrink":
        del parts[at]
    else:
        parts[at] = sentence(rng)
    paragraphs[i] = " ".join(parts)
    return separator.join(paragraphs)


def chunk_book(text: str, layout: str) -> list[Chunk]:
    return chunk_document(text, sections=markdown_sections(text) if layout == "headings" else ())


# --- Tokens -------------------------------------------------------------------------------


def test_estimate_tokens_takes_the_larger_of_characters_and_words():
    assert estimate_tokens("") == 0
    assert estimate_tokens("a b c d e f") == 8  # six short words: 6 * 4/3
    assert estimate_tokens("x" * 40) == 10  # one long identifier: 40 / 4
    assert estimate_tokens("two words") == 3


# --- Headings -----------------------------------------------------------------------------


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_each_corpus_lesson_is_one_chunk(path):
    text = lesson(path)
    chunks = chunks_of(text, max_tokens=1200)
    assert len(chunks) == 1
    assert chunks[0].text == text.strip()
    assert chunks[0].section == (markdown_sections(text)[0].path)


def test_a_handbook_of_all_lessons_chunks_at_lesson_boundaries():
    """Each lesson fits, so each is one chunk; the lone handbook heading rides with the first."""
    lessons = [re.sub(r"(?m)^#", "##", lesson(p).strip()) for p in LESSONS]
    handbook = "# Handbook\n\n" + "\n\n".join(lessons) + "\n"
    chunks = chunks_of(handbook)
    assert_well_formed(handbook, chunks, 1200)
    assert len(chunks) == len(lessons)
    assert chunks[0].text == "# Handbook\n\n" + lessons[0]
    assert [c.text for c in chunks[1:]] == lessons[1:]
    assert all(c.start == c.body_start for c in chunks)  # every cut is at a heading
    assert chunks[0].section == ("Handbook",)
    assert chunks[1].section == ("Handbook", markdown_sections(lessons[1])[0].path[0])


def test_an_oversized_section_is_split_into_its_preamble_and_subsections():
    intro = " ".join(["Intro words go here."] * 40)
    parts = [" ".join([f"Part {n} has words."] * 40) for n in range(3)]
    text = "# Top\n\n" + intro + "".join(f"\n\n## Sub {n}\n\n{p}" for n, p in enumerate(parts))
    chunks = chunks_of(text, max_tokens=300)
    assert_well_formed(text, chunks, 300)
    assert [c.section for c in chunks] == [("Top",)] + [("Top", f"Sub {n}") for n in range(3)]
    assert chunks[0].text == "# Top\n\n" + intro
    assert [c.text for c in chunks[1:]] == [f"## Sub {n}\n\n{p}" for n, p in enumerate(parts)]


def test_tiny_sections_are_packed_together():
    text = "".join(f"## Heading {n}\n\nOne short line about item {n}.\n\n" for n in range(500))
    chunks = chunks_of(text, max_tokens=1200)
    assert_well_formed(text, chunks, 1200)
    assert len(chunks) <= 500 * 16 // 600  # at least half full on average
    assert all(c.start == c.body_start and text[c.body_start] == "#" for c in chunks)
    assert all(c.text.rstrip().endswith(".") for c in chunks)  # no heading left dangling


def test_sections_of_normal_size_are_not_packed_together():
    text = "".join(f"## Part {n}\n\n" + "Some words here. " * 100 + "\n\n" for n in range(4))
    chunks = chunks_of(text, max_tokens=1200)
    assert len(chunks) == 4
    assert [c.section for c in chunks] == [(f"Part {n}",) for n in range(4)]


def test_section_is_the_innermost_heading_path_at_the_body_start():
    text = book("headings", pages=30)
    sections = markdown_sections(text)
    chunks = chunk_document(text, sections=sections, max_tokens=400)
    assert_well_formed(text, chunks, 400)
    assert all(c.section == section_at(sections, c.body_start) for c in chunks)


def test_outline_sections_need_not_start_at_a_heading():
    """A PDF outline gives page offsets: no '#' there, and text before the first section."""
    pages = [f"Page {n}. " + paragraph(random.Random(n)) for n in range(12)]
    text = "Cover page.\f" + "\f".join(pages)
    starts = [text.index(f"Page {n}.") for n in range(12)] + [len(text)]
    outline = [Section(("Part A",), starts[0], starts[6], 1)]
    outline += [Section(("Part A", f"Ch {n}"), starts[n], starts[n + 2], 2) for n in (0, 2, 4)]
    outline += [Section(("Part B",), starts[6], len(text), 1)]
    chunks = chunk_document(text, sections=outline, max_tokens=150, overlap_tokens=20)
    assert_well_formed(text, chunks, 150)
    assert chunks[0].section == () and chunks[0].text.startswith("Cover page.")
    assert all(c.section == section_at(outline, c.body_start) for c in chunks)
    assert {c.section for c in chunks} > {("Part A", "Ch 2"), ("Part B",)}


# --- Stretches without headings -----------------------------------------------------------


def test_a_long_text_without_headings_is_cut_at_sentence_ends():
    text = book("paragraphs", pages=20)
    chunks = chunk_document(text, max_tokens=300)
    assert_well_formed(text, chunks, 300)
    ends = {s + len(text[s:e].rstrip()) for s, e, _ in sentences(text)}
    assert all(c.end in ends for c in chunks)
    paragraph_ends = {m.start() for m in re.finditer(r"\n\n", text)} | {len(text) - 1}
    assert sum(c.end in paragraph_ends for c in chunks) > len(chunks) / 2  # mostly paragraphs


def test_a_sentence_is_cut_only_when_it_alone_exceeds_the_bound():
    long_sentence = " ".join(["word"] * 400) + "."
    text = f"Short one. {long_sentence} Another short one.\n\nA last paragraph."
    chunks = chunk_document(text, max_tokens=100)
    assert_well_formed(text, chunks, 100)
    inside = range(text.index(long_sentence), text.index(long_sentence) + len(long_sentence))
    sentence_ends = {e for _, e, _ in sentences(text)}
    assert all(c.end in sentence_ends or c.end in inside for c in chunks)
    assert sum(c.end in inside for c in chunks) >= 4


def test_a_word_longer_than_the_bound_is_cut_by_characters():
    text = "Before. " + "x" * 500 + " after."
    chunks = chunk_document(text, max_tokens=20, overlap_tokens=0)
    assert_well_formed(text, chunks, 20)
    assert max(len(c.text) for c in chunks) <= 80


def test_overlap_repeats_the_previous_sentences_inside_one_section_only():
    text = book("headings", pages=40)
    chunks = chunks_of(text, max_tokens=500, overlap_tokens=60)
    assert_well_formed(text, chunks, 500)
    sections = markdown_sections(text)
    heading_starts = {s.start for s in sections}
    overlapped = 0
    for before, chunk in zip(chunks, chunks[1:], strict=False):
        if chunk.body_start in heading_starts:
            assert chunk.start == chunk.body_start
        if chunk.start == chunk.body_start:
            continue
        overlapped += 1
        assert before.body_start <= chunk.start < before.end <= chunk.body_start
        assert chunk.section == section_at(sections, before.end - 1)  # where `before` ended
        repeated = text[chunk.start : before.end]
        assert estimate_tokens(repeated) <= 60
        assert len([s for s in sentences(repeated) if not s[2]]) <= 2
    assert overlapped > len(chunks) / 2


def test_no_overlap_when_overlap_tokens_is_zero():
    text = book("paragraphs", pages=10)
    chunks = chunk_document(text, max_tokens=300, overlap_tokens=0)
    assert_well_formed(text, chunks, 300)
    assert all(c.start == c.body_start for c in chunks)


def test_rejects_a_bound_too_small_for_a_word():
    with pytest.raises(ValueError):
        chunk_document("Hello.", max_tokens=1)


def test_blank_text_has_no_chunks():
    assert chunk_document("") == []
    assert chunk_document(" \n\n\t ") == []


def test_chunking_is_deterministic():
    text = book("headings", pages=30)
    assert chunks_of(text, max_tokens=500) == chunks_of(text, max_tokens=500)


# --- Stability ----------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["headings", "paragraphs", "lines"])
@pytest.mark.parametrize("where", [0.0, 0.003, 0.31, 0.5, 0.77, 0.997, 1.0])
@pytest.mark.parametrize("kind", ["grow", "shrink", "replace"])
def test_editing_one_paragraph_changes_at_most_two_chunks(layout, where, kind):
    text = book(layout)
    before = chunk_book(text, layout)
    assert len(before) > 100
    after = chunk_book(edit(text, layout, where, kind, seed=round(where * 1000)), layout)
    assert changed(before, after) <= 2


@pytest.mark.parametrize("layout", ["headings", "paragraphs", "lines"])
def test_long_documents_fill_chunks_well_above_half_the_bound(layout):
    chunks = chunk_book(book(layout), layout)
    assert_well_formed(book(layout), chunks, 1200)
    assert sum(c.tokens for c in chunks) / len(chunks) > 0.6 * 1200


# --- Any text -----------------------------------------------------------------------------

FRAGMENTS = st.one_of(
    st.sampled_from(VOCABULARY + GLUE + ["Model.", "Graph!", "e.g.", "Fig. 2", "v1.2"]),
    st.sampled_from([" ", "  ", "\n", "\n\n", "\t", ". ", "? ", "\r\n", "\f", "\u2028"]),
    st.sampled_from(["# ", "## ", "### ", "- ", "1. ", "```\n", "#", "> "]),
    st.integers(1, 400).map(lambda n: "y" * n),
    st.text(max_size=12),
)
TEXTS = st.lists(FRAGMENTS, max_size=300).map("".join)


@PROPERTY
@given(
    text=TEXTS,
    max_tokens=st.integers(8, 200),
    overlap=st.integers(0, 80),
    with_sections=st.booleans(),
)
def test_bound_and_coverage_hold_for_any_text(text, max_tokens, overlap, with_sections):
    sections = markdown_sections(text) if with_sections else ()
    chunks = chunk_document(text, sections=sections, max_tokens=max_tokens, overlap_tokens=overlap)
    assert_well_formed(text, chunks, max_tokens)
    for chunk in chunks:
        if chunk.start < chunk.body_start:
            assert estimate_tokens(text[chunk.start : chunk.body_start].rstrip()) <= overlap


@PROPERTY
@given(text=TEXTS, data=st.data(), max_tokens=st.integers(8, 100))
def test_bound_and_coverage_hold_for_arbitrary_outlines(text, data, max_tokens):
    """Outline sections may overlap, nest oddly or point past the text: still well formed."""
    offsets = st.integers(-5, len(text) + 5)
    outline = data.draw(
        st.lists(
            st.builds(
                Section,
                path=st.lists(st.sampled_from("ABC"), min_size=1, max_size=3).map(tuple),
                start=offsets,
                end=offsets,
                level=st.integers(1, 4),
            ),
            max_size=8,
        )
    )
    chunks = chunk_document(text, sections=outline, max_tokens=max_tokens)
    assert_well_formed(text, chunks, max_tokens)
