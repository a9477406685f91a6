"""Where the offline bootstrap's patterns are lost: the relation statements its reader
finds between two terms, how many have both ends typed, and how many (relation,
domain, range) groups reach the pattern threshold. Reads the graph's active sources
(every chunk) the way ``manage.py bootstrap --sample-chunks 0`` does.

    KG_VAR_DIR=... .venv/bin/python -m evaluation.ontology.statements [--show]
"""

from __future__ import annotations

import os
import sys
from collections import Counter


def main(argv: list[str]) -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgreview.settings")
    django.setup()
    from construction.ontology.offline import (
        Settings,
        _fold_twins,
        _kept_types,
        _once,
        _phrases,
        _term_types,
    )
    from construction.ontology.reading import ChunkReader
    from construction.ontology.types import KnownOntology
    from kgreview.agents import adapters
    from kgreview.agents.bootstrap import corpus_chunks

    chunks = corpus_chunks(sample_chunks=None)
    reader = ChunkReader(adapters.vocabulary())
    readings = _once([reader.read(c) for c in chunks])
    known = KnownOntology()
    sources = len({r.chunk.slug for r in readings})
    kept = _kept_types(_phrases(readings, {}), sources=sources, settings=Settings(), known=known)
    kept, folded = _fold_twins(kept, readings)
    types_of = _term_types(readings, kept, known, folded)
    statements = [r for reading in readings for r in reading.relations]
    typed = [
        (r.relation, types_of[r.source_key], types_of[r.target_key], r)
        for r in statements
        if types_of.get(r.source_key) and types_of.get(r.target_key)
    ]
    one_end = sum(
        bool(types_of.get(r.source_key)) != bool(types_of.get(r.target_key)) for r in statements
    )
    # a group's support is the sentences that state it (as the drafts count it)
    groups = Counter(
        (rel, d, g)
        for rel, d, g, _, _ in {
            (rel, d, g, r.quote.source_slug, r.quote.start) for rel, d, g, r in typed
        }
    )
    print(f"relation statements read: {len(statements)}")
    print(f"  both ends typed: {len(typed)}; one end typed: {one_end}")
    print(f"  (relation, domain, range) groups: {len(groups)}")
    print(f"  groups stated once: {sum(n == 1 for n in groups.values())}")
    print(f"  groups stated twice or more (patterns): {sum(n >= 2 for n in groups.values())}")
    untyped = Counter(
        end
        for r in statements
        for end, key, other in (
            (r.source, r.source_key, r.target_key),
            (r.target, r.target_key, r.source_key),
        )
        if not types_of.get(key) and types_of.get(other)
    )
    print("  the untyped ends facing a typed one, most often:")
    print("   ", ", ".join(f"{name} ({n})" for name, n in untyped.most_common(40)))
    if "--show" in argv:
        for rel, d, g, r in sorted(typed, key=lambda x: x[:3]):
            print(f"  {rel}: {d} -> {g} | {r.source} -> {r.target} | {r.quote.quote[:100]}")


if __name__ == "__main__":
    main(sys.argv[1:])
