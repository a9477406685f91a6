"""Settings of the server ``bench keys`` starts: the real ones (middleware, sessions, CSP,
whitenoise), with static files served from the finders so no ``collectstatic`` is needed,
and the review loop's Server-Timing header on, whatever KG_SERVER_TIMING says: the bench
reads the server's share from it."""

from kgreview.settings import *  # noqa: F403

STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
KG_SERVER_TIMING = True
