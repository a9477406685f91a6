"""Rebuild one evaluation manual from its installed Debian documentation package.

    python -m evaluation.tools.manual postgresql   # or python, zsh
    python -m evaluation.tools.manual zsh --root /usr/share/doc/zsh-common/html

Selects pages of prose at random with the profile's fixed seed, copies them to
``evaluation/manuals/<name>/pages/`` (a page in a folder is copied as ``folder-page.html``
so that every page's file name, and so its source slug, is unique), copies the package's
copyright file to ``LICENSE``, writes ``SOURCE.md`` and ``terms.jsonl`` (see ``terms``).
The same package version and seed select the same pages again.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from lxml import html

from .indexes import PARSERS
from .terms import term_rows

OUT = Path(__file__).resolve().parents[1] / "manuals"


@dataclass(frozen=True)
class Profile:
    name: str
    package: str
    root: str
    title: str
    licence: str
    generator: str
    index_format: str  # a key of indexes.PARSERS
    indexes: tuple[str, ...]
    exclude: str  # a regular expression over the page's path relative to the root
    # Pages are drawn from each stratum in turn: (a regular expression over the page's
    # path, how many pages); a page goes to the first stratum it matches.
    strata: tuple[tuple[str, int], ...] = ((r".*", 55),)
    seed: int = 24
    # A second draw from the pages the first left, with the next seed, in the same form
    # as ``strata``: added to reach a hundred labelled edges a manual while the first
    # draw, and the labels of its pages, stay as they were.
    extra: tuple[tuple[str, int], ...] = ()
    max_bytes: int = 100_000
    suffixes: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())


PROFILES = {
    "postgresql": Profile(
        name="postgresql",
        package="postgresql-doc-15",
        root="/usr/share/doc/postgresql-doc-15/html",
        title="PostgreSQL 15 Documentation",
        licence="PostgreSQL Licence (a permissive BSD/MIT-style licence)",
        generator="DocBook XSL (bookindex.html)",
        index_format="docbook",
        indexes=("bookindex.html",),
        exclude=r"^(release-.*|bookindex|index|legalnotice|biblio|.*-index)\.html$",
        suffixes=(" configuration parameter", " storage parameter"),
        extra=((r".*", 125),),
    ),
    "python": Profile(
        name="python",
        package="python3.11-doc",
        root="/usr/share/doc/python3.11/html",
        title="Python 3.11 Documentation",
        licence="PSF License Agreement for Python 3.11 (permissive); code examples "
        "also under the Zero-Clause BSD licence",
        generator="Sphinx (genindex-all.html)",
        index_format="sphinx",
        indexes=("genindex-all.html",),
        exclude=r"^(whatsnew/.*|c-api/.*|distutils/.*|install/.*|genindex.*|py-modindex"
        r"|search|contents|copyright|license|about|bugs|download|index)\.html$",
        strata=((r"^library/", 20), (r".*", 20)),
        extra=((r"^library/", 95), (r".*", 25)),
        max_bytes=100_000,
        notes=(
            "Half the pages come from the library reference, half from the rest (the "
            "tutorial, the language reference, the HOWTOs, the FAQs, the glossary, using "
            "and extending Python): the library is three quarters of the prose pages and "
            "would otherwise crowd out the language.",
            "The C API and the legacy distutils and install guides are left out.",
        ),
    ),
    "zsh": Profile(
        name="zsh",
        package="zsh-doc",
        root="/usr/share/doc/zsh-common/html",
        title="The Z Shell Manual (zsh 5.9)",
        licence="the Zsh licence (permissive, MIT-style); see LICENSE, 'Files: *'",
        generator="GNU Texinfo 6.8, texi2any (six *-Index.html pages)",
        index_format="texinfo",
        indexes=(
            "Concept-Index.html",
            "Options-Index.html",
            "Variables-Index.html",
            "Functions-Index.html",
            "Editor-Functions-Index.html",
            "Style-and-Tag-Index.html",
        ),
        exclude=r"^(FAQ.*|.*-Index|index)\.html$",
        max_bytes=400_000,
        notes=(
            "The manual is split by chapter: it has 25 pages of prose, so every one is "
            "taken (fewer pages than the other manuals, each longer; compare yields per "
            "1,000 words). The first selection stopped at 120,000 bytes (18 pages); the "
            "seven larger chapters were added to reach a hundred labelled edges.",
            "The FAQ pages are left out: the index does not cover them.",
        ),
    ),
}

# A page of prose: enough words in paragraphs, and paragraphs the larger part of it
# (a page of tables or code listings is reference, not prose).
MIN_PARAGRAPH_WORDS = 250
MIN_PARAGRAPH_SHARE = 0.4


def prose_words(raw: bytes) -> tuple[int, int]:
    """Words in paragraphs (outside tables) and words in the whole body."""
    root = html.fromstring(raw)
    body = root.find("body")
    if body is None:
        return 0, 0
    for node in body.xpath(".//script|.//style"):
        node.drop_tree()
    total = len(body.text_content().split())
    para = sum(len(p.text_content().split()) for p in body.xpath(".//p[not(ancestor::table)]"))
    return para, total


def is_prose(raw: bytes) -> bool:
    para, total = prose_words(raw)
    return para >= MIN_PARAGRAPH_WORDS and para >= MIN_PARAGRAPH_SHARE * total


def copy_name(page: str) -> str:
    """ "library/os.path.html" -> "library-os.path.html"."""
    return page.replace("/", "-")


def candidates(profile: Profile, root: Path) -> list[str]:
    """Every page of prose the profile may select, in a stable order."""
    exclude = re.compile(profile.exclude)
    found = []
    for path in sorted(root.rglob("*.html")):
        page = path.relative_to(root).as_posix()
        if exclude.match(page) or path.is_symlink() or path.stat().st_size > profile.max_bytes:
            continue
        if is_prose(path.read_bytes()):
            found.append(page)
    return found


def select(profile: Profile, pool: list[str]) -> list[str]:
    """The profile's seeded random choice from each stratum (the whole stratum when it is
    smaller than its count)."""
    chosen: list[str] = []
    for seed, strata in ((profile.seed, profile.strata), (profile.seed + 1, profile.extra)):
        rng = random.Random(seed)
        left = [page for page in pool if page not in chosen]
        for pattern, count in strata:
            stratum = [page for page in left if re.search(pattern, page)]
            left = [page for page in left if page not in stratum]
            chosen += stratum if len(stratum) <= count else rng.sample(stratum, count)
    return sorted(chosen)


def package_version(package: str) -> str:
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Version}", package],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown (dpkg-query could not tell)"
    return out.stdout.strip()


def source_md(profile: Profile, version: str, pool: int, pages: list[str], words: int) -> str:
    strata = ""
    if len(profile.strata) > 1:
        strata = ", by strata: " + ", then ".join(
            f"{count} of the pages matching `{pattern}`" for pattern, count in profile.strata
        )
    if profile.extra:
        strata += "; then a second draw from the pages left, with seed " + (
            f"{profile.seed + 1}: "
            + ", then ".join(
                f"{count} of the pages matching `{pattern}`" for pattern, count in profile.extra
            )
        )
    lines = [
        f"# {profile.title}",
        "",
        f"- Debian package: `{profile.package}` {version} (Debian 12), installed under "
        f"`{profile.root}`",
        f"- Licence: {profile.licence}. `LICENSE` is the package's copyright file.",
        f"- Generator: {profile.generator}",
        f"- Index pages read for `terms.jsonl`: {', '.join(profile.indexes)}",
        f"- Selection: the pages of prose (at least {MIN_PARAGRAPH_WORDS} words in "
        f"paragraphs outside tables, and paragraphs at least {MIN_PARAGRAPH_SHARE:.0%} of "
        f"the page's words), at most {profile.max_bytes:,} bytes, not matching "
        f"`{profile.exclude}`: {pool} pages; {len(pages)} taken at random with seed "
        f"{profile.seed} (Python's `random.Random(seed).sample` over the sorted list"
        f"{strata}).",
        f"- {len(pages)} pages, {words:,} words in their bodies as lxml reads them "
        "(navigation included; the figures after import are in evaluation/README.md). A "
        "page in a folder is copied as `folder-page.html`.",
        *(f"- {note}" for note in profile.notes),
        f"- Rebuild: `.venv/bin/python -m evaluation.tools.manual {profile.name}`",
        "",
    ]
    return "\n".join(lines)


def build(profile: Profile, root: Path, out: Path) -> dict:
    if not root.is_dir():
        raise SystemExit(f"{root} is not a folder: apt-get install -y {profile.package}")
    pool = candidates(profile, root)
    pages = select(profile, pool)
    copied = {page: copy_name(page) for page in pages}
    if len(set(copied.values())) != len(copied):
        raise SystemExit("two selected pages would be copied to the same file name")
    if out.exists():
        shutil.rmtree(out / "pages", ignore_errors=True)
    (out / "pages").mkdir(parents=True, exist_ok=True)
    words = 0
    for page, name in copied.items():
        raw = (root / page).read_bytes()
        (out / "pages" / name).write_bytes(raw)
        words += prose_words(raw)[1]
    entries = []
    parse = PARSERS[profile.index_format]
    for index in profile.indexes:
        entries.extend(parse((root / index).read_bytes(), index))
    rows = term_rows(entries, copied, suffixes=profile.suffixes)
    with open(out / "terms.jsonl", "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    copyright_file = Path("/usr/share/doc") / profile.package / "copyright"
    shutil.copyfile(copyright_file, out / "LICENSE")
    version = package_version(profile.package)
    (out / "SOURCE.md").write_text(
        source_md(profile, version, len(pool), pages, words), encoding="utf-8"
    )
    on_pages = sum(1 for r in rows if r.get("pages"))
    return {"pages": len(pages), "pool": len(pool), "terms": len(rows), "on_pages": on_pages}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", choices=sorted(PROFILES))
    parser.add_argument("--root", type=Path, help="the installed manual (default: Debian's)")
    parser.add_argument("--out", type=Path, help="default: evaluation/manuals/NAME")
    args = parser.parse_args(argv)
    profile = PROFILES[args.name]
    summary = build(profile, args.root or Path(profile.root), args.out or OUT / profile.name)
    print(
        f"{profile.name}: {summary['pages']} of {summary['pool']} prose pages; "
        f"{summary['terms']} index terms, {summary['on_pages']} on the selected pages"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
