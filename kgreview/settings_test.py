"""Settings for the test suite: the real settings with fast hashing and plain static files."""

from .settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# No manifest under live_server/the test client: tests must not depend on collectstatic.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_AUTOREFRESH = True
CELERY_BEAT_SCHEDULE = {}

# A file, not memory, so worker and server subprocesses started by tests see the test data.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}  # noqa: F405
WHITENOISE_USE_FINDERS = True

# Tasks queued by the code under test (e.g. on commit) run in-process, errors raised.
CELERY_TASK_ALWAYS_EAGER = True
CELERY_TASK_EAGER_PROPAGATES = True

# Rate limits are tested where they are the subject (tests/api/test_limits.py); elsewhere
# a test may call the API as often as it needs.
KG_API_RATE = "off"
KG_API_HEAVY_RATE = "off"
KG_API_PROPOSE_RATE = "off"
