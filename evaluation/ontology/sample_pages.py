"""Draw a held-out corpus's sample: every HTML page of 5-100 KiB under ROOT (paths
sorted), 60 of them by ``random.Random(27).sample``, copied to OUT with the
subdirectory folded into the name ("howto/new-command.html" -> "howto__new-command.html").

    python -m evaluation.ontology.sample_pages /usr/share/doc/sqlite3 /tmp/sqlite-pages
"""

from __future__ import annotations

import os
import random
import shutil
import sys


def pages(root: str) -> list[str]:
    found = []
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            if path.endswith(".html") and 5 * 1024 <= os.path.getsize(path) <= 100 * 1024:
                found.append(path)
    return sorted(found)


def main(argv: list[str]) -> None:
    root, out = argv[0], argv[1]
    every = pages(root)
    os.makedirs(out, exist_ok=True)
    for path in random.Random(27).sample(every, 60):
        shutil.copy(path, os.path.join(out, os.path.relpath(path, root).replace("/", "__")))
    print(f"60 of {len(every)} pages copied to {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
