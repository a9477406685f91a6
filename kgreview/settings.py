"""Settings for kgreview, read from environment variables with working defaults.

Embedded default (no variables set): SQLite in ``var/``, kombu's filesystem broker in
``var/broker``, the offline extractor. Scaled: set ``DATABASE_URL`` to PostgreSQL and
``CELERY_BROKER_URL`` to Redis or RabbitMQ; nothing else changes.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("KG_VAR_DIR", BASE_DIR / "var"))


def env_str(name: str, default: str) -> str:
    value = os.environ.get(name, "").strip()
    return value or default


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in {"1", "true", "yes", "on"}:
        return True
    if raw in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use true or false)")


def env_int(name: str, default: int, *, minimum: int = 0) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a whole number") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}")
    return value


def env_float(name: str, default: float, *, low: float, high: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number") from None
    if not low <= value <= high:
        raise ImproperlyConfigured(f"{name}={value} must lie between {low} and {high}")
    return value


def _secret_key() -> str:
    configured = os.environ.get("DJANGO_SECRET_KEY", "").strip()
    if configured:
        return configured
    # A per-checkout key kept beside the embedded database, so sessions survive a
    # restart without anyone committing a secret.
    key_file = VAR_DIR / "secret_key"
    try:
        return key_file.read_text().strip()
    except FileNotFoundError:
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        key = secrets.token_urlsafe(50)
        key_file.write_text(key)
        key_file.chmod(0o600)
        return key


SECRET_KEY = _secret_key()
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = [
    h.strip()
    for h in env_str("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver").split(",")
    if h.strip()
]
CSRF_TRUSTED_ORIGINS = [
    o.strip() for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()
]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "django_celery_beat",
    "kgreview.core",
    "kgreview.graph",
    "kgreview.review",
    "kgreview.agents",
    "kgreview.api",
    "kgreview.exports",
    "kgreview.insights",
    "kgreview.explorer",
    "kgreview.web",
    "ninja",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "kgreview.core.middleware.RefuseControlCharacters",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "kgreview.urls"
WSGI_APPLICATION = "kgreview.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "kgreview.web.context.navigation",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------
DEFAULT_DATABASE_URL = f"sqlite:///{VAR_DIR / 'kgreview.sqlite3'}"
DATABASE_URL = env_str("DATABASE_URL", DEFAULT_DATABASE_URL)
try:
    _db = dj_database_url.parse(DATABASE_URL)
except Exception as exc:  # dj-database-url raises several types for bad URLs
    raise ImproperlyConfigured(f"DATABASE_URL={DATABASE_URL!r} cannot be parsed: {exc}") from exc
if _db["ENGINE"] == "django.db.backends.sqlite3":
    if _db["NAME"] != ":memory:":
        Path(_db["NAME"]).parent.mkdir(parents=True, exist_ok=True)
    _db["OPTIONS"] = {
        # The web server, the worker and beat share one file: wait for the write lock
        # instead of failing, and take it at BEGIN so two writers never deadlock.
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
elif _db["ENGINE"] == "django.db.backends.postgresql":
    _db["CONN_MAX_AGE"] = env_int("KG_DB_CONN_MAX_AGE", 60)
    _db["CONN_HEALTH_CHECKS"] = True
else:
    raise ImproperlyConfigured(
        f"DATABASE_URL must point at SQLite or PostgreSQL, not {_db['ENGINE']}"
    )
DATABASES = {"default": _db}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Auth -----------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# --- Internationalisation -------------------------------------------------------------
LANGUAGE_CODE = "en"
TIME_ZONE = env_str("TZ", "UTC")
USE_I18N = False
USE_TZ = True

# --- Static files ---------------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

# --- Security -------------------------------------------------------------------------
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from the page, not the cookie
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_SECURE = env_bool("KG_SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE

# --- Celery ---------------------------------------------------------------------------
BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    for sub in ("queue", "processed", "control"):
        (BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        # kombu's default is ./control, in whatever folder the process started in: the
        # broker's exchange tables belong with its queue, not in the working tree.
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
else:
    # A task whose worker vanished is handed to another worker after this many seconds.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": env_int("KG_VISIBILITY_TIMEOUT", 3600, minimum=1)
    }
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_TASK_DEFAULT_QUEUE", "celery")
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_TASK_ALWAYS_EAGER = env_bool("KG_CELERY_EAGER", False)
CELERY_BEAT_SCHEDULE = {
    # Proves the whole broker -> worker -> database path works; the page header shows it.
    "worker-heartbeat": {
        "task": "agents.worker_heartbeat",
        "schedule": float(env_int("KG_HEARTBEAT_SECONDS", 30, minimum=1)),
    },
}
DJANGO_CELERY_BEAT_TZ_AWARE = True

# --- kgreview -------------------------------------------------------------------------
KG_LLM_PROVIDER = env_str("KG_LLM_PROVIDER", "offline")
if KG_LLM_PROVIDER not in {"offline", "openai"}:
    raise ImproperlyConfigured(f"KG_LLM_PROVIDER={KG_LLM_PROVIDER!r}: use offline or openai")
OPENAI_API_KEY = os.environ.get("OPENAI_API_KEY", "")
OPENAI_BASE_URL = os.environ.get("OPENAI_BASE_URL", "")
KG_LLM_MODEL = env_str("KG_LLM_MODEL", "gpt-4o-mini")
KG_CONFIDENCE_GATE = env_float("KG_CONFIDENCE_GATE", 0.6, low=0.0, high=1.0)
# Long documents are read in chunks of about this many tokens (split at headings, then
# paragraphs and sentences), each with its own candidate budget.
KG_CHUNK_TOKENS = env_int("KG_CHUNK_TOKENS", 1200, minimum=50)
KG_CHUNK_OVERLAP_TOKENS = env_int("KG_CHUNK_OVERLAP_TOKENS", 60)
KG_MAX_EDGES_PER_CHUNK = env_int("KG_MAX_EDGES_PER_CHUNK", 8, minimum=1)
# Chunks of one document read at once by a model extractor (threads in the worker).
KG_LLM_CONCURRENCY = env_int("KG_LLM_CONCURRENCY", 4, minimum=1)
# Tokens one construction run may spend on model calls; 0 means no limit.
KG_LLM_MAX_TOKENS_PER_RUN = env_int("KG_LLM_MAX_TOKENS_PER_RUN", 0)
KG_MAX_SOURCE_BYTES = env_int("KG_MAX_SOURCE_BYTES", 50_000_000, minimum=1)
KG_LLM_TIMEOUT = env_float("KG_LLM_TIMEOUT", 60.0, low=0.1, high=3600.0)
KG_LLM_MAX_RETRIES = env_int("KG_LLM_MAX_RETRIES", 3)
KG_LLM_VALIDATION_RETRIES = env_int("KG_LLM_VALIDATION_RETRIES", 2)
KG_LLM_BACKOFF_BASE = env_float("KG_LLM_BACKOFF_BASE", 0.5, low=0.0, high=60.0)
KG_LLM_BACKOFF_MAX = env_float("KG_LLM_BACKOFF_MAX", 8.0, low=0.0, high=600.0)
KG_LLM_JSON_MODE = env_str("KG_LLM_JSON_MODE", "auto")
if KG_LLM_JSON_MODE not in {"auto", "json_schema", "json_object"}:
    raise ImproperlyConfigured(
        f"KG_LLM_JSON_MODE={KG_LLM_JSON_MODE!r}: use auto, json_schema or json_object"
    )
KG_FUZZY_THRESHOLD = env_float("KG_FUZZY_THRESHOLD", 90.0, low=50.0, high=100.0)
KG_TASK_RETRIES = env_int("KG_TASK_RETRIES", 2)
KG_ITEM_LEASE_SECONDS = env_int("KG_ITEM_LEASE_SECONDS", 900, minimum=1)
KG_DISCOVERY_MIN_SUPPORT = env_int("KG_DISCOVERY_MIN_SUPPORT", 3, minimum=1)
KG_DISCOVERY_MIN_SOURCES = env_int("KG_DISCOVERY_MIN_SOURCES", 2, minimum=1)
KG_WORKER_STALE_SECONDS = env_int("KG_WORKER_STALE_SECONDS", 120, minimum=1)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("KG_LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "INFO"}},
}
