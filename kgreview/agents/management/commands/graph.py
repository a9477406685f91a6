"""manage.py graph NAME [--docs PATH ...] [--vocabulary PRESET|FILE] — a team's own graph;
manage.py graph --demo — the demo. Both then serve web + worker + beat (``serve``).

Run it through ``make graph NAME=acme DOCS=... VOCABULARY=...`` and ``make run``: they set
``KG_VAR_DIR`` to the graph's own folder (``var/graphs/NAME/``, ``var/demo/``) before
Django reads its settings. See ``kgreview.agents.own_graph`` for what keeps the two apart.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from kgreview.agents import own_graph
from kgreview.core.errors import DomainError
from kgreview.graph.importing import import_paths
from kgreview.graph.vocabulary_files import Vocabulary, load_file, load_preset, preset_names
from kgreview.review.vocabulary import vocabulary_install

DEFAULT_VOCABULARY = "documentation"


class Command(BaseCommand):
    help = (
        "Start (or open again) a team's own graph: its own database and folder, its "
        "relation vocabulary (default: documentation), its documents read by the agents, "
        "a curator account; then serve it like `make run`. --demo does the same for the "
        "sample curriculum."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", nargs="?", help="the graph's name (its folder's name)")
        parser.add_argument("--demo", action="store_true", help="the demo, not a team's graph")
        parser.add_argument(
            "--docs", nargs="+", default=[], metavar="PATH", help="documents or folders to import"
        )
        parser.add_argument(
            "--vocabulary",
            metavar="PRESET|FILE",
            help=f"{' or '.join(preset_names())}, or a .json/.yaml file of your own "
            f"(default on the first start: {DEFAULT_VOCABULARY}; later: left as it is)",
        )
        parser.add_argument(
            "--curator",
            metavar="USERNAME",
            help="the first curator's account (default: your login name)",
        )
        parser.add_argument("--provider", choices=["offline", "openai"], default=None)
        parser.add_argument("--no-serve", action="store_true", help="set up, then stop")
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))

    def handle(self, *args, name, demo: bool, **opts):
        if demo and name:
            raise CommandError("Give a graph's name or --demo, not both.")
        if not demo and not name:
            raise CommandError("Name the graph (e.g. `make graph NAME=acme`), or give --demo.")
        try:
            if demo:
                self._demo(**opts)
            else:
                self._team(name, **opts)
        except DomainError as exc:
            raise CommandError(exc.message) from None
        if not opts["no_serve"]:
            call_command("collectstatic", interactive=False, verbosity=0)
            call_command("serve", host=opts["host"], port=opts["port"])

    # --- a team's graph -------------------------------------------------------------------

    def _team(self, name: str, *, docs, vocabulary, curator, provider, **opts) -> None:
        own_graph.check_name(name)
        own_graph.check_team_folder(name)
        own_graph.check_documents(docs)
        # Checked before migrating: the demo's or another graph's database is left as it is.
        found = own_graph.check_team_database(name)
        self._say(f"Graph “{name}”: {own_graph.database_words()}; files in {settings.VAR_DIR}.")
        call_command("migrate", interactive=False, verbosity=0)
        found = own_graph.check_team_database(name)
        if found is None:
            chosen = _vocabulary(vocabulary or DEFAULT_VOCABULARY)
            with transaction.atomic():
                report = vocabulary_install(vocabulary=chosen, acting_user=None)
                own_graph.graph_mark(name=name, kind="team", vocabulary=chosen.name)
            self._say(f"Started an empty graph. {report.summary()}")
        else:
            self._say(
                f"Opened the graph started {found.started_at:%Y-%m-%d %H:%M} "
                f"({found.vocabulary} vocabulary)."
            )
            if vocabulary:
                report = vocabulary_install(vocabulary=_vocabulary(vocabulary), acting_user=None)
                self._say(report.summary())
        if docs:
            self._import_and_read(docs, provider=provider)
        self._accounts(curator or own_graph.default_curator_name())

    def _import_and_read(self, docs: list[str], *, provider: str | None) -> None:
        report = import_paths(docs, max_bytes=settings.KG_MAX_SOURCE_BYTES, acting_user=None)
        counts = report.as_json()["counts"]
        self._say(
            f"Documents: {counts['created']} new, {counts['revised']} revised, "
            f"{counts['unchanged']} unchanged, {counts['errors']} could not be read."
        )
        for problem in report.problems:
            self.stderr.write(f"  {problem.path}: {problem.message}")
        fresh = [r.source.slug for _, r in report.results if r.outcome in ("created", "revised")]
        if not fresh:
            self._say("Nothing new to read (the hourly construct schedule reads any change).")
            return
        arguments = [a for slug in dict.fromkeys(fresh) for a in ("--source", slug)]
        if provider:
            arguments += ["--provider", provider]
        call_command("construct", *arguments, stdout=self.stdout, stderr=self.stderr)

    def _accounts(self, username: str) -> None:
        curators, made = own_graph.curator_account(username=username)
        if made is not None:
            self._say(
                f"Curator account: {made.username}, password {made.password} (shown once; "
                "change it on the admin's password page)."
            )
            return
        self._say(
            f"Curators: {', '.join(curators)}. A forgotten password: "
            f"KG_VAR_DIR={_shown_dir()} .venv/bin/python manage.py changepassword USERNAME."
        )

    # --- the demo -------------------------------------------------------------------------

    def _demo(self, *, provider, **opts) -> None:
        own_graph.check_demo_folder()
        own_graph.check_demo_database()
        self._say(f"The demo: {own_graph.database_words()}; files in {settings.VAR_DIR}.")
        old = own_graph.var_root() / "kgreview.sqlite3"
        if old.exists() and Path(settings.VAR_DIR).resolve() != own_graph.var_root().resolve():
            self._say(
                f"Note: {old} is the database an older `make run` kept; it is left as it was "
                "(see the README, “Starting your own graph”)."
            )
        call_command("migrate", interactive=False, verbosity=0)
        own_graph.check_demo_database()
        own_graph.graph_mark(name=own_graph.DEMO, kind=own_graph.DEMO, vocabulary="curriculum")
        call_command(
            "import_sources", str(own_graph.corpus_dir()), stdout=self.stdout, stderr=self.stderr
        )
        arguments = ["--all"] + (["--provider", provider] if provider else [])
        call_command("construct", *arguments, stdout=self.stdout, stderr=self.stderr)
        call_command("demo_accounts", stdout=self.stdout)

    def _say(self, words: str) -> None:
        self.stdout.write(words)
        self.stdout.flush()


def _vocabulary(chosen: str) -> Vocabulary:
    """A preset by name, or a file by path (anything with a suffix or a slash)."""
    if chosen in preset_names():
        return load_preset(chosen)
    if "/" in chosen or Path(chosen).suffix:
        return load_file(chosen)
    return load_preset(chosen)  # refused in words that name the presets


def _shown_dir() -> str:
    here = Path(settings.VAR_DIR).resolve()
    try:
        return str(here.relative_to(Path(settings.BASE_DIR).resolve()))
    except ValueError:
        return str(here)
