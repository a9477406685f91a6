"""A team's own graph, and the demo, each in a database of its own that says whose it is.

``manage.py graph NAME`` (``make graph NAME=...``) starts a team's graph in its own
folder (``var/graphs/NAME/``: the SQLite database, the broker's folders, the secret key;
or, with ``DATABASE_URL``, the team's PostgreSQL database) and ``manage.py graph --demo``
(``make run``) the demo in ``var/demo/``. The first start writes one curation log row,
``graph.start``, naming the graph and whether it is the demo or a team's: that row is how
a database says whose it is, on SQLite and PostgreSQL alike. From then on the demo's
database is refused as a team's graph, a team's as the demo or as another team's graph,
and a database that already holds documents without that row (an older ``make run``'s,
mixed with a team's documents) as either: a team's graph starts empty.

Everything here reads, but ``graph_mark`` and ``curator_account`` (which write, audited).
"""

from __future__ import annotations

import getpass
import re
import secrets
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection, transaction
from django.utils.text import slugify

from kgreview.core import audit
from kgreview.core.errors import ValidationFailed
from kgreview.core.models import AuditEntry
from kgreview.graph.importing import BadSourceFile, read_upload
from kgreview.graph.models import Concept, Source
from kgreview.review.models import Proposal

if TYPE_CHECKING:
    from django.contrib.auth.models import User

DEMO = "demo"
NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
START = "graph.start"


class GraphRefused(ValidationFailed):
    """This folder or database cannot be the graph asked for; nothing was changed."""

    code = "graph_refused"
    status = 400


def var_root() -> Path:
    return Path(settings.BASE_DIR) / "var"


def demo_dir() -> Path:
    return var_root() / DEMO


def graphs_dir() -> Path:
    return var_root() / "graphs"


def corpus_dir() -> Path:
    """The sample curriculum: the demo's documents, never a team's."""
    return Path(settings.BASE_DIR) / "corpus"


def database_words() -> str:
    """The database in use, for people: the SQLite file, or PostgreSQL's host and name
    (never a password)."""
    db = settings.DATABASES["default"]
    if db["ENGINE"].endswith("sqlite3"):
        return f"SQLite, {db['NAME']}"
    return f"PostgreSQL, database {db['NAME']} on {db.get('HOST') or 'localhost'}"


# --- Whose database is this ------------------------------------------------------------


@dataclass(frozen=True)
class Identity:
    """What the first start of a database recorded: the graph's name, ``demo`` or
    ``team``, the vocabulary it started with, and when."""

    name: str
    kind: str
    vocabulary: str
    started_at: datetime

    @property
    def is_demo(self) -> bool:
        return self.kind == DEMO


def identity() -> Identity | None:
    """Whose this database is, or None: never started (or no tables yet)."""
    if AuditEntry._meta.db_table not in connection.introspection.table_names():
        return None
    row = AuditEntry.objects.filter(action=START).order_by("pk").first()
    if row is None:
        return None
    return Identity(
        name=row.subject_id,
        kind=row.after.get("kind", ""),
        vocabulary=row.after.get("vocabulary", ""),
        started_at=row.created_at,
    )


def _held() -> dict[str, int]:
    """What the database holds already: sources, concepts, proposals (none if no tables)."""
    if Source._meta.db_table not in connection.introspection.table_names():
        return {}
    counts = {
        "documents": Source.objects.count(),
        "concepts": Concept.objects.count(),
        "proposals": Proposal.objects.count(),
    }
    return {what: n for what, n in counts.items() if n}


@lru_cache(maxsize=1)
def _sample_slugs() -> frozenset[str]:
    """The slugs the sample curriculum's lessons import under (their front matter's)."""
    slugs = set()
    for path in sorted(corpus_dir().glob("*.md")):
        try:
            slug, _ = read_upload(path.read_bytes(), filename=path.name, max_bytes=10_000_000)
        except (OSError, BadSourceFile):
            continue
        slugs.add(slug)
    return frozenset(slugs)


def _held_words(held: dict[str, int]) -> str:
    return ", ".join(f"{n} {what if n != 1 else what[:-1]}" for what, n in held.items())


def check_name(name: str) -> None:
    """A team graph's name: a folder name anyone can type, and never the demo's."""
    if not NAME.match(name or ""):
        raise GraphRefused(
            f"“{name[:40]}” cannot name a graph: use lowercase letters, digits, hyphens and "
            "underscores, starting with a letter or digit (e.g. acme or platform-docs)."
        )
    if name == DEMO:
        raise GraphRefused(
            "“demo” is the demo's name: `make run` serves the sample curriculum in var/demo/. "
            "Give your team's graph a name of its own, e.g. `make graph NAME=acme`."
        )


def check_team_folder(name: str) -> None:
    """The folder this process keeps its files in (``KG_VAR_DIR``) must be the graph's own:
    named after it, and neither the demo's nor ``var/`` itself (where ``make run`` kept the
    demo before it moved to ``var/demo/``)."""
    here = Path(settings.VAR_DIR).resolve()
    if here == demo_dir().resolve():
        raise GraphRefused(
            f"KG_VAR_DIR is the demo's folder ({here}); a team's graph never shares it. "
            f"Run `make graph NAME={name}`, which keeps it in var/graphs/{name}/."
        )
    if here == var_root().resolve():
        raise GraphRefused(
            f"KG_VAR_DIR is var/ itself, where `make run` kept the demo before it moved to "
            f"var/demo/. Run `make graph NAME={name}` (it sets KG_VAR_DIR=var/graphs/{name}) "
            f"or set KG_VAR_DIR to a folder named {name}."
        )
    if here.name != name:
        raise GraphRefused(
            f"KG_VAR_DIR ({here}) is not the folder of the graph “{name}”: its last part must "
            f"be “{name}”, so two graphs never share one folder. Run `make graph NAME={name}`."
        )


def check_team_database(name: str) -> Identity | None:
    """This database may be the team graph ``name``'s: refused when it is the demo's,
    another graph's, or holds documents it never started with. Returns its identity
    (None: a new graph)."""
    found = identity()
    if found is not None and found.is_demo:
        raise GraphRefused(
            f"This database ({database_words()}) is the demo's: it holds the sample "
            "curriculum. A team's graph gets its own database: unset DATABASE_URL (each graph "
            "then has its own SQLite file), or point it at an empty database of the team's."
        )
    if found is not None and found.name != name:
        raise GraphRefused(
            f"This database ({database_words()}) is the graph “{found.name}”'s, started "
            f"{found.started_at:%Y-%m-%d}. Each graph has its own database: run `make graph "
            f"NAME={found.name}` to open that one, or give “{name}” another database."
        )
    if found is None:
        held = _held()
        if held:
            sample = Source.objects.filter(slug__in=_sample_slugs()).count()
            among = (
                f", among them the sample curriculum ({sample} of its lessons)," if sample else ""
            )
            raise GraphRefused(
                f"This database ({database_words()}) already holds {_held_words(held)}"
                f"{among} and was never started as a team's graph (an older `make run` used "
                "it, or something else did). A team's graph starts empty: unset DATABASE_URL "
                "(the graph gets its own SQLite file) or give it an empty database."
            )
    return found


def check_demo_folder() -> None:
    """The demo never lives in a team graph's folder."""
    here = Path(settings.VAR_DIR).resolve()
    if here.parent == graphs_dir().resolve():
        raise GraphRefused(
            f"KG_VAR_DIR ({here}) is the team graph “{here.name}”'s folder; the demo lives in "
            "var/demo/. Run `make run` without KG_VAR_DIR."
        )


def check_demo_database() -> Identity | None:
    """This database may hold the demo: refused when it is a team's graph, or holds
    documents other than the sample curriculum's."""
    found = identity()
    if found is not None and not found.is_demo:
        raise GraphRefused(
            f"This database ({database_words()}) is the team graph “{found.name}”'s; the "
            "sample curriculum never goes into a team's graph. Unset DATABASE_URL to run the "
            "demo in its own SQLite file (var/demo/)."
        )
    if found is None and _held():
        others = Source.objects.exclude(slug__in=_sample_slugs()).count()
        if others:
            raise GraphRefused(
                f"This database ({database_words()}) holds {others} document(s) that are not "
                "the sample curriculum's; the demo does not mix with them. Unset DATABASE_URL "
                "to run the demo in its own SQLite file (var/demo/), or start those documents "
                "as a team's graph of their own."
            )
    return found


def check_documents(paths: list[str]) -> None:
    """A team's documents are its own: the sample curriculum is refused, and so is a
    folder that holds it."""
    sample = corpus_dir().resolve()
    for raw in paths:
        path = Path(raw).resolve()
        if path == sample or sample in path.parents or path in sample.parents:
            raise GraphRefused(
                f"{raw} holds the sample curriculum, which is the demo's (`make run`); a "
                "team's graph never imports it. Give the folder of your team's documents."
            )


# --- Writes ------------------------------------------------------------------------------


@transaction.atomic
def graph_mark(
    *, name: str, kind: str, vocabulary: str, acting_user: User | None = None
) -> AuditEntry | None:
    """Record, once, whose this database is (the curation log's ``graph.start`` row).
    ``acting_user`` None: the operator's command, the system's own change."""
    if identity() is not None:
        return None
    what = "the demo" if kind == DEMO else f"the team graph “{name}”"
    return audit.record(
        acting_user=acting_user,
        action=START,
        subject=("graph", name),
        summary=f"Started {what} with the {vocabulary} vocabulary.",
        after={"name": name, "kind": kind, "vocabulary": vocabulary},
    )


@dataclass(frozen=True)
class Account:
    username: str
    password: str | None  # shown once, when the account is made here


def default_curator_name() -> str:
    """The person running the command, as a username (``curator`` when unknown)."""
    try:
        who = getpass.getuser()
    except (KeyError, OSError):
        who = ""
    return slugify(who)[:150] or "curator"


@transaction.atomic
def curator_account(*, username: str) -> tuple[list[str], Account | None]:
    """The graph's curators; when it has none, a curator account for ``username`` with a
    password made here and returned once (the operator's command: no acting user)."""
    curators = Group.objects.get(name="curator")
    names = sorted(curators.user_set.filter(is_active=True).values_list("username", flat=True))
    if names:
        return names, None
    User = get_user_model()
    if User.objects.filter(username=username).exists():
        raise GraphRefused(
            f"There is already an account “{username}” that is not a curator: choose "
            "another name with CURATOR=..., or make that account a curator in the admin."
        )
    password = secrets.token_urlsafe(12)
    user = User.objects.create_user(username=username, password=password, is_staff=True)
    user.groups.add(curators)
    audit.record(
        acting_user=None,
        action="user.create",
        subject=user,
        summary=f"Made the curator account “{username}” for the graph's first start.",
        after={"username": username, "role": "curator"},
    )
    return [username], Account(username, password)
