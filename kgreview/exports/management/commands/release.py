"""manage.py release create NAME [--as-of ISO] [--notes TEXT] [--json]; release list [--json]

The command line acts as the system: the release is in the curation log without a user.
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from kgreview.core.errors import DomainError, ValidationFailed
from kgreview.core.instants import AS_OF_HELP, parse_instant
from kgreview.exports.releases import selectors
from kgreview.exports.releases.services import release_create


def _file_path(release, stored) -> str:
    return f"/releases/{release.name}/files/{stored.filename}"


class Command(BaseCommand):
    help = (
        "Named releases of the graph (docs/releases.md). `release create NAME` freezes the "
        "graph as of an instant (default now), writes its exports (JSON-LD, Neo4j CSV, "
        "GraphML, Turtle, SHACL shapes) and validation report with their SHA-256, and "
        "notes what changed since the previous release; `release list` lists them."
    )

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="Cut a release; it never changes afterwards.")
        create.add_argument(
            "name",
            help="A slug: lower-case letters, digits, dots, hyphens, underscores (2026-12).",
        )
        create.add_argument(
            "--as-of",
            dest="as_of",
            default=None,
            metavar="ISO",
            help=f"The instant it freezes: {AS_OF_HELP}. Default: now. Never in the future, "
            "never before the previous release's.",
        )
        create.add_argument("--notes", default="", help="Your own words for the release.")
        create.add_argument("--json", action="store_true", help="Print the release as JSON.")
        listing = sub.add_parser("list", help="Releases, latest first, with their files.")
        listing.add_argument("--json", action="store_true")

    def handle(self, *args, **opts):
        if opts["action"] == "create":
            return self._create(opts)
        return self._list(opts)

    def _create(self, opts):
        try:
            at = parse_instant(opts["as_of"]) if opts["as_of"] is not None else None
        except ValidationFailed as exc:
            raise CommandError(f"--as-of: {exc}") from None
        try:
            release = release_create(
                name=opts["name"], as_of=at, notes=opts["notes"], acting_user=None
            )
        except DomainError as exc:
            raise CommandError(exc.message) from None
        release = selectors.release_named(release.name)
        if opts["json"]:
            self.stdout.write(_dumps(selectors.release_json(release, file_url=_file_path)))
            return
        counts = release.changes["edges"]["counts"]
        self.stdout.write(
            f'Release "{release.name}" cut as of {release.as_of.isoformat()}: '
            f"{counts['after']} edges ({counts['added']} added, {counts['changed']} changed, "
            f"{counts['retired']} retired since "
            f"{release.previous.name if release.previous else 'the start'}); "
            f"{'conforms to' if release.conforms else 'does not conform to'} its shapes."
        )
        for stored in release.files.all():
            self.stdout.write(f"  {stored.filename}  {stored.size} bytes  sha256 {stored.sha256}")

    def _list(self, opts):
        rows = list(selectors.releases())
        if opts["json"]:
            self.stdout.write(
                _dumps({"releases": [selectors.release_json(r, file_url=_file_path) for r in rows]})
            )
            return
        if not rows:
            self.stdout.write("No release has been cut yet.")
        for r in rows:
            who = r.created_by.username if r.created_by else "the command line"
            self.stdout.write(f"{r.name}  as of {r.as_of.isoformat()}  by {who}")


def _dumps(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=1)
