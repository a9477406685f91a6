"""The document formats are one table (``construction.formats``): every other list of
suffixes, media types, readers and labels is read from it."""

from __future__ import annotations

from importlib import import_module

from construction.doc_sandbox import in_child
from construction.formats import FORMATS, READABLE, SUFFIXES, format_for, format_label


def test_every_format_names_a_reader_that_exists():
    for fmt in FORMATS:
        module, _, function = fmt.reader.partition(":")
        assert callable(getattr(import_module(module), function)), fmt.reader


def test_every_suffix_of_the_table_is_read_as_its_format_and_no_other_is():
    for fmt in FORMATS:
        for suffix in (*fmt.suffixes, *fmt.also_reads):
            assert SUFFIXES[suffix] == fmt.media_type
            assert format_for(f"Notes{suffix.upper()}") is fmt
    assert len(SUFFIXES) == sum(len(f.suffixes) + len(f.also_reads) for f in FORMATS)
    assert format_for("notes.exe") is None and format_for("README") is None


def test_the_refusal_names_the_listed_suffixes_and_the_sandbox_follows_the_table():
    assert ", ".join(s for f in FORMATS for s in f.suffixes) == READABLE
    for fmt in FORMATS:
        assert in_child(f"a{fmt.suffixes[0]}") == fmt.sandboxed
        assert format_label(fmt.media_type) == fmt.label
