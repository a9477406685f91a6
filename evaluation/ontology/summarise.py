"""Summarise a bootstrap run's proposals (``manage.py bootstrap --json`` saved to a file,
and the proposals' payloads read from the graph it ran on) as Markdown, and draw the
sample judged by hand.

    KG_VAR_DIR=... .venv/bin/python -m evaluation.ontology.summarise RUN_JSON OUT.md [--seed N]
"""

from __future__ import annotations

import json
import os
import random
import sys


def main(argv: list[str]) -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgreview.settings")
    django.setup()
    from kgreview.review.models import Proposal

    with open(argv[0]) as f:
        report = json.load(f)
    seed = int(argv[3]) if len(argv) > 3 and argv[2] == "--seed" else 27
    ids = [p["id"] for p in report["proposals"]]
    proposals = {p.pk: p for p in Proposal.objects.filter(pk__in=ids)}
    run = report["run"]
    out = [
        f"Run: {run['sources']} sources, {run['chunks']} chunks, {run['duration_s']} s; "
        f"{len(ids)} proposals.",
        "",
        "## Concept types (key < parent: support, sources; members)",
        "",
    ]
    rows = [proposals[i] for i in ids]
    for p in rows:
        if p.kind == "add_concept_type":
            d = p.payload
            parent = f" < {d['parent_key']}" if d.get("parent_key") else ""
            members = d["description"].split("(such as ")[-1].split(")")[0]
            out.append(f"- `{d['key']}`{parent}: {p.reason.split('Support: ')[-1]} e.g. {members}")
    out += ["", "## Relation types", ""]
    for p in rows:
        if p.kind == "add_relation_type":
            d = p.payload
            shapes = ", ".join(
                f"{x['domain_key']} -> {x['range_key']}" for x in d.get("patterns", [])
            )
            support = p.reason.split("Support: ")[-1]
            out.append(f"- `{d['key']}` ({d['verb']}): {shapes or 'open'}; {support}")
    out += ["", "## Relation patterns", ""]
    for p in rows:
        if p.kind == "add_relation_pattern":
            d = p.payload
            out.append(
                f"- `{d['relation_key']}`: {d['domain_key']} -> {d['range_key']}; "
                f'{p.reason.split("Support: ")[-1]} e.g. "{d["examples"][0]["quote"][:140]}"'
            )
    out += ["", "## Attributes", ""]
    for p in rows:
        if p.kind == "add_attribute":
            d = p.payload
            values = ", ".join(sorted({e.get("value", "") for e in d["examples"]}))
            out.append(
                f"- `{d['type_key']}.{d['key']}` ({d['datatype']}): "
                f"{p.reason.split('Support: ')[-1]} values seen: {values}"
            )
    sample = random.Random(seed).sample(ids, min(30, len(ids)))
    out += ["", f"## The sample judged by hand (30 at random, seed {seed})", ""]
    for i in sample:
        p = proposals[i]
        d = p.payload
        what = d.get("key") or d.get("relation_key")
        if p.kind == "add_relation_pattern":
            what = f"{d['relation_key']}: {d['domain_key']} -> {d['range_key']}"
        if p.kind == "add_attribute":
            what = f"{d['type_key']}.{d['key']}"
        quote = d["examples"][0]["quote"][:160].replace("\n", " ") if d.get("examples") else ""
        out.append(f'- #{i} {p.kind} `{what}` — "{quote}" — VERDICT')
    with open(argv[1], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
