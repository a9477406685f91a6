"""Cutting releases at the same moment, on PostgreSQL with real threads and
transactions: one name is cut once, and every release's notes start from the release
before it."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from kgreview.core.errors import DomainError
from kgreview.exports.models import Release, ReleaseBuild
from kgreview.exports.releases import files
from kgreview.exports.releases.services import release_create, release_request
from tests.races import race

pytestmark = [pytest.mark.usefixtures("reference_data"), pytest.mark.django_db(transaction=True)]

ROUNDS = 3


@pytest.fixture(autouse=True)
def release_dir(settings, tmp_path):
    settings.KG_RELEASE_DIR = tmp_path / "releases"
    return settings.KG_RELEASE_DIR


def test_two_cuts_of_one_name_make_one_release(on_postgres, f, release_dir):
    """One wins; the other is refused in words, and leaves no folder or staging behind."""
    a, b = f.concept("Embeddings"), f.concept("Vector search")
    f.edge(a, b)
    for n in range(ROUNDS):
        name = f"same-{n}"
        results = race(
            lambda name=name: release_create(name=name, acting_user=None),
            lambda name=name: release_create(name=name, acting_user=None),
        )
        made = [r for r in results if isinstance(r, Release)]
        refused = [r for r in results if isinstance(r, DomainError)]
        assert len(made) == 1 and len(refused) == 1, results
        assert refused[0].message  # said in words
        assert Release.objects.filter(name=name).count() == 1
        stored = Release.objects.get(name=name).files.all()
        for s in stored:
            assert files.checked_path(
                release_name=name, filename=s.filename, size=s.size, sha256=s.sha256
            )
    assert list((release_dir / ".staging").iterdir()) == []


def test_releases_cut_at_once_chain_each_to_the_one_before(on_postgres, f):
    """Two names at once: whichever commits second names the first as its previous (or is
    refused in words because the first came in while it was built)."""
    f.concept("Embeddings")
    for n in range(ROUNDS):
        results = race(
            lambda n=n: release_create(name=f"left-{n}", acting_user=None),
            lambda n=n: release_create(name=f"right-{n}", acting_user=None),
        )
        assert all(isinstance(r, Release | DomainError) for r in results), results
        assert any(isinstance(r, Release) for r in results)
    chain = list(Release.objects.order_by("as_of", "id"))
    for before, after in zip(chain, chain[1:], strict=False):
        assert Release.objects.get(pk=after.pk).previous_id == before.pk


def _whole(release: Release) -> None:
    """Nothing half-written: six files on disk, each as recorded, and a done build (if
    any) pointing at it."""
    stored = list(release.files.all())
    assert len(stored) == 6, release.name
    for s in stored:
        files.checked_path(
            release_name=release.name, filename=s.filename, size=s.size, sha256=s.sha256
        )


def test_two_curators_asking_for_releases_at_once_get_one_chain(on_postgres, f, release_dir):
    """Two curators press "Cut release" at the same moment, the builds run at once (the
    eager worker): the same name makes one build and one release, the other refused in
    words; two names make releases that chain one after the other (the later one's
    predecessor is the earlier), or the overtaken build fails saying why. No release
    ever shares its predecessor with another; no staging folder is left."""
    f.edge(f.concept("Embeddings"), f.concept("Vector search"))
    cora, carl = f.user("cora", role="curator"), f.user("carl", role="curator")
    for n in range(ROUNDS):
        same = race(
            lambda n=n: release_request(name=f"same-{n}", acting_user=cora),
            lambda n=n: release_request(name=f"same-{n}", acting_user=carl),
        )
        refused = [r for r in same if isinstance(r, DomainError)]
        assert len(refused) == 1 and "same-" in refused[0].message, same
        assert ReleaseBuild.objects.filter(name=f"same-{n}").count() == 1
        two = race(
            lambda n=n: release_request(name=f"left-{n}", acting_user=cora),
            lambda n=n: release_request(name=f"right-{n}", acting_user=carl),
        )
        assert all(isinstance(r, ReleaseBuild) for r in two), two
    builds = list(ReleaseBuild.objects.all())
    assert {b.status for b in builds} <= {"done", "failed"}
    for b in builds:
        if b.status == "failed":
            assert "Another release was cut" in b.error or "is before release" in b.error, b.error
        else:
            _whole(b.release)
    chain = list(Release.objects.order_by("as_of", "id"))
    assert [r.previous_id for r in chain] == [None, *(r.pk for r in chain[:-1])]
    assert len({r.previous_id for r in chain}) == len(chain)
    assert list((release_dir / ".staging").iterdir()) == []


def test_the_database_itself_refuses_two_releases_after_one(on_postgres, f):
    """The chain is a constraint, not only a lock: a second successor of a release (or a
    second first release) is refused by the database."""
    f.concept("Embeddings")
    first = release_create(name="first", acting_user=None)
    release_create(name="second", acting_user=None)
    fields = {"as_of": first.as_of, "changes": {}, "validation": {}, "conforms": True}
    for previous in (first, None):
        with pytest.raises(IntegrityError), transaction.atomic():
            Release.objects.create(name=f"rogue-{previous}", previous=previous, **fields)
    assert Release.objects.count() == 2
