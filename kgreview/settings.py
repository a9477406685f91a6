"""Settings for kgreview, read from environment variables with working defaults.

Embedded default (no variables set): SQLite in ``var/``, kombu's filesystem broker in
``var/broker``, the offline extractor. Scaled: set ``DATABASE_URL`` to PostgreSQL and
``CELERY_BROKER_URL`` to Redis or RabbitMQ; nothing else changes.
"""

from __future__ import annotations

import os
import re
import secrets
from datetime import timedelta
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


# Keys anyone could guess: defaults from tutorials and the password the README publishes.
KNOWN_SECRET_KEYS = {
    "changeme",
    "change-me",
    "change_me",
    "secret",
    "secret-key",
    "secret_key",
    "secretkey",
    "password",
    "kgreview",
    "kgreview-demo",
    "insecure",
    "development",
    "dev",
    "test",
}
MIN_SECRET_KEY_LENGTH = 50
MIN_SECRET_KEY_CHARACTERS = 5


def weak_secret_key_reason(key: str) -> str | None:
    """Why ``key`` is unfit to sign sessions in a shared deployment, or None if it is fit.

    The same bounds as Django's own deploy check (security.W009), plus a list of known keys.
    """
    if key.casefold() in KNOWN_SECRET_KEYS or key.casefold().startswith("kgreview-demo"):
        return "is a well-known value"
    if key.startswith("django-insecure"):
        return "starts with 'django-insecure', the prefix of keys generated for development"
    if len(key) < MIN_SECRET_KEY_LENGTH:
        return f"is {len(key)} characters long; use at least {MIN_SECRET_KEY_LENGTH}"
    if len(set(key)) < MIN_SECRET_KEY_CHARACTERS:
        return f"has fewer than {MIN_SECRET_KEY_CHARACTERS} distinct characters"
    return None


def _secret_key(debug: bool) -> str:
    configured = os.environ.get("DJANGO_SECRET_KEY", "").strip()
    if configured:
        reason = None if debug else weak_secret_key_reason(configured)
        if reason:
            raise ImproperlyConfigured(
                f"DJANGO_SECRET_KEY {reason}. With DJANGO_DEBUG off kgreview refuses to sign "
                "sessions with it: generate one with "
                "`python -c 'import secrets; print(secrets.token_urlsafe(50))'`, or unset it "
                "to use the per-checkout key in KG_VAR_DIR/secret_key."
            )
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


DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = _secret_key(DEBUG)
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
    "kgreview.questions",
    "kgreview.api",
    "kgreview.exports",
    "kgreview.insights",
    "kgreview.explorer",
    "kgreview.web",
    "ninja",
    "axes",
    "csp",
]

MIDDLEWARE = [
    # First, so every other middleware is inside the time it reports (the review loop's
    # Server-Timing header; KG_SERVER_TIMING=false unloads it).
    "kgreview.core.server_timing.ServerTiming",
    "django.middleware.security.SecurityMiddleware",
    "kgreview.api.middleware.JsonErrors",
    # A body under /api/v1/ that is not JSON: 415 in words, before a form parser reads it.
    "kgreview.api.middleware.JsonBodies",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # A full disk, in a view or as the session is saved: 503 in words, not a 500.
    "kgreview.core.middleware.DiskFullMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "kgreview.core.middleware.RefuseControlCharacters",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Signed out in another tab: htmx goes to the sign-in page, not into the card.
    "kgreview.core.middleware.HtmxSignInAgain",
    # A refusal (DomainError) or a lost lock race nobody caught: in words, not a 500.
    "kgreview.core.refusals.RefusalMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes asks: it turns a refused login into the lockout page.
    "axes.middleware.AxesMiddleware",
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
        # recursive_triggers: a REPLACE's delete of the row it replaces fires the history
        # tables' delete triggers (kgreview.core.nodelete), so it is refused like a DELETE.
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
        "PRAGMA recursive_triggers=ON;",
    }
elif _db["ENGINE"] == "django.db.backends.postgresql":
    _db["CONN_MAX_AGE"] = env_int("KG_DB_CONN_MAX_AGE", 60)
    _db["CONN_HEALTH_CHECKS"] = True
    # Two planner features that pay off for long analytical scans, never for a request's
    # short queries, and that switch on by themselves once the tables grow (docs/
    # performance.md, "The missing factor"): JIT compilation, once a statement's estimated
    # cost crosses jit_above_cost (100-150 ms compiling each, more on a slower core), and
    # parallel workers, once it crosses parallel_setup_cost (two processes started for a
    # 10 ms step of the ask loop, twice its time, worse on a busy machine).
    _server = [] if env_bool("KG_PG_JIT", False) else ["jit=off"]
    _server.append(f"max_parallel_workers_per_gather={env_int('KG_PG_PARALLEL_WORKERS', 0)}")
    _options = _db.setdefault("OPTIONS", {})
    _options["options"] = " ".join([_options.get("options", ""), *(f"-c {s}" for s in _server)])
    _options["options"] = _options["options"].strip()
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
AUTHENTICATION_BACKENDS = [
    # django-axes first: a locked-out username and address is refused before any password
    # check. It needs the request, so tests log in with force_login or pass request=.
    "axes.backends.AxesStandaloneBackend",
    # Django's ModelBackend, reading the user's roles in the query that loads the user.
    "kgreview.core.backends.RoleBackend",
]
# Login throttling: this many failed logins for one username from one address lock that
# pair out for the cool-off; another user, or the same user elsewhere, is not affected.
AXES_FAILURE_LIMIT = env_int("KG_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("KG_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "kgreview.web.login.locked_out"
AXES_CLIENT_IP_CALLABLE = "kgreview.web.login.client_ip"
# Behind a reverse proxy every request comes from the proxy's address: name the header it
# sets (X-Forwarded-For, X-Real-IP) and the last address in it is taken as the client's.
KG_CLIENT_IP_HEADER = env_str("KG_CLIENT_IP_HEADER", "")

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
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
# KG_SECURE_COOKIES=true says the site is served over HTTPS: cookies only travel over
# TLS, browsers are told to use HTTPS for a year (HSTS), and plain HTTP is redirected.
SECURE_COOKIES = env_bool("KG_SECURE_COOKIES", False)
SESSION_COOKIE_SECURE = SECURE_COOKIES
CSRF_COOKIE_SECURE = SECURE_COOKIES
SECURE_HSTS_SECONDS = env_int("KG_HSTS_SECONDS", 31_536_000 if SECURE_COOKIES else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("KG_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("KG_HSTS_PRELOAD", False)
# A TLS-terminating proxy may redirect HTTP itself: KG_SSL_REDIRECT=false leaves it to it.
SECURE_SSL_REDIRECT = env_bool("KG_SSL_REDIRECT", SECURE_COOKIES)
# Load balancers probe the health check over plain HTTP inside the network.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]


def _proxy_ssl_header(raw: str) -> tuple[str, str] | None:
    """``X-Forwarded-Proto`` or ``X-Forwarded-Proto=https``: the header a TLS-terminating
    proxy sets, so Django knows the browser spoke HTTPS (needed with the redirect)."""
    if not raw:
        return None
    name, _, value = raw.partition("=")
    name = name.strip()
    if not name or not all(c.isalnum() or c == "-" for c in name):
        raise ImproperlyConfigured(
            f"KG_PROXY_SSL_HEADER={raw!r} is not a header name (e.g. X-Forwarded-Proto=https)"
        )
    return "HTTP_" + name.upper().replace("-", "_"), value.strip() or "https"


SECURE_PROXY_SSL_HEADER = _proxy_ssl_header(env_str("KG_PROXY_SSL_HEADER", ""))
# Preloading is the domain owner's decision (a submission to the browsers' list, which
# binds every subdomain); KG_HSTS_PRELOAD=true opts in. Until then the check that
# recommends it stays quiet so `check --deploy --fail-level WARNING` can pass.
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]

# Content-Security-Policy (django-csp): scripts and styles only from our own static files,
# no inline script, no inline style, no eval. JSON data blocks (json_script) are not run
# and need no permission. The original-file download sets its own sandboxing policy.
# The one inline <style> is the 500 page's (it must not depend on static files); its
# hash is allowed, and tests/web/test_security_headers.py keeps it in step.
ERROR_PAGE_STYLE_HASH = "'sha256-/tlaW6AJpIMl8TgxE6EFcRmyJpjoGraAP2PmAnY/cqs='"
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", ERROR_PAGE_STYLE_HASH],
        "img-src": ["'self'"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# --- Caches ---------------------------------------------------------------------------
# "default" is per process (the queue's facet counts). "shared" is seen by every process:
# the API's rate limits count there. Embedded, it is a folder beside the database; scaled
# out, point KG_CACHE_URL at Redis so every machine counts in one place.
KG_CACHE_URL = env_str("KG_CACHE_URL", "")
if KG_CACHE_URL and not KG_CACHE_URL.startswith(("redis://", "rediss://")):
    raise ImproperlyConfigured(
        f"KG_CACHE_URL={KG_CACHE_URL!r}: use a redis:// URL or leave it empty"
    )
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "shared": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": KG_CACHE_URL,
            # A stopped Redis is noticed in a second, not after the OS's connect timeout.
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 2},
        }
        if KG_CACHE_URL
        else {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    ),
}


# --- API rate limits -------------------------------------------------------------------
# Requests one API token (or one signed-in user) may make: every operation counts
# against KG_API_RATE; the walks (neighbours, path, learning path) and the diff also
# count against KG_API_HEAVY_RATE. "N/s", "N/min", "N/hour" or "N/day"; "off" disables.
def env_rate(name: str, default: str) -> str:
    value = env_str(name, default).lower()
    if value != "off" and not re.fullmatch(r"[1-9]\d*/(s|sec|m|min|h|hour|d|day)", value):
        raise ImproperlyConfigured(
            f"{name}={value!r} is not a rate: use N/s, N/min, N/hour or N/day (N at least 1), "
            "or off"
        )
    return value


KG_API_RATE = env_rate("KG_API_RATE", "600/min")
KG_API_HEAVY_RATE = env_rate("KG_API_HEAVY_RATE", "60/min")
# Batches of proposals one API token may submit (POST /api/v1/proposals), per token.
KG_API_PROPOSE_RATE = env_rate("KG_API_PROPOSE_RATE", "30/min")
# Live (unrevoked) API tokens one account may hold; the rates above count per account.
KG_API_MAX_TOKENS_PER_USER = env_int("KG_API_MAX_TOKENS_PER_USER", 10, minimum=1)
# The API's schema and docs page: for signed-in users with a role (and token holders),
# or, when true, for anyone.
KG_API_DOCS_PUBLIC = env_bool("KG_API_DOCS_PUBLIC", False)

# --- Celery ---------------------------------------------------------------------------
BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    for sub in ("queue", "processed", "control", "quarantine"):
        (BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
    # kombu's filesystem transport, hardened (kgreview/agents/broker.py): a malformed
    # message file is moved into broker/quarantine with its reason instead of stopping
    # the worker, and a folder someone removed is created again.
    CELERY_BROKER_TRANSPORT = "kgreview.agents.broker:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        # kombu's default is ./control, in whatever folder the process started in: the
        # broker's exchange tables belong with its queue, not in the working tree.
        "control_folder": str(BROKER_DIR / "control"),
        "quarantine_folder": str(BROKER_DIR / "quarantine"),
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
# django-celery-beat's DatabaseScheduler that waits out a database outage instead of dying
# (kgreview/agents/beat.py); the broker is retried for ever, by beat and by workers.
CELERY_BEAT_SCHEDULER = "kgreview.agents.beat:ResilientScheduler"
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
KG_BEAT_RETRY_SECONDS = env_int("KG_BEAT_RETRY_SECONDS", 5, minimum=1)
CELERY_TASK_ALWAYS_EAGER = env_bool("KG_CELERY_EAGER", False)

# The reaper: recovering a run's sources whose worker died never depends on the broker
# handing the message back (the filesystem broker cannot). A worker reading a source
# renews its claim every KG_ITEM_HEARTBEAT_SECONDS; a claim not renewed for
# KG_ITEM_STALE_SECONDS is taken as lost. Every KG_REAPER_SECONDS beat runs agents.reap,
# which queues such sources again, and also the sources of a run that showed no sign of
# life for KG_ITEM_REQUEUE_SECONDS (their message never reached a worker; longer than the
# longest pause before a model call is retried, 10 minutes).
KG_ITEM_HEARTBEAT_SECONDS = env_int("KG_ITEM_HEARTBEAT_SECONDS", 15, minimum=1)
KG_ITEM_STALE_SECONDS = env_int("KG_ITEM_STALE_SECONDS", 120, minimum=2)
if KG_ITEM_STALE_SECONDS < 2 * KG_ITEM_HEARTBEAT_SECONDS:
    raise ImproperlyConfigured(
        f"KG_ITEM_STALE_SECONDS={KG_ITEM_STALE_SECONDS} must be at least twice "
        f"KG_ITEM_HEARTBEAT_SECONDS={KG_ITEM_HEARTBEAT_SECONDS}: a live worker would look dead"
    )
KG_REAPER_SECONDS = env_int("KG_REAPER_SECONDS", 60, minimum=1)
KG_ITEM_REQUEUE_SECONDS = env_int("KG_ITEM_REQUEUE_SECONDS", 720, minimum=1)
# Every worker runs the reaper too (a thread of its main process), so runs resume while
# beat is down; off only for tests that count the reaper's passes themselves.
KG_WORKER_REAPER = env_bool("KG_WORKER_REAPER", True)
CELERY_BEAT_SCHEDULE = {
    # Proves the whole broker -> worker -> database path works; the page header shows it.
    "worker-heartbeat": {
        "task": "agents.worker_heartbeat",
        "schedule": float(env_int("KG_HEARTBEAT_SECONDS", 30, minimum=1)),
    },
    # Resumes construction runs whose sources lost their worker or their message.
    "agents-reap": {"task": "agents.reap", "schedule": float(KG_REAPER_SECONDS)},
}
DJANGO_CELERY_BEAT_TZ_AWARE = True

# --- kgreview -------------------------------------------------------------------------
KG_LLM_PROVIDER = env_str("KG_LLM_PROVIDER", "offline")
if KG_LLM_PROVIDER not in {"offline", "rules", "openai"}:
    raise ImproperlyConfigured(f"KG_LLM_PROVIDER={KG_LLM_PROVIDER!r}: use offline, rules or openai")
OPENAI_API_KEY = os.environ.get("OPENAI_API_KEY", "")
OPENAI_BASE_URL = os.environ.get("OPENAI_BASE_URL", "")
KG_LLM_MODEL = env_str("KG_LLM_MODEL", "gpt-4o-mini")
KG_CONFIDENCE_GATE = env_float("KG_CONFIDENCE_GATE", 0.6, low=0.0, high=1.0)
# Team review (review.team): the share of proposals two reviewers decide blind, the
# agreement (Krippendorff's alpha) under which every proposal of a relation is doubled,
# and how long a reviewer holds the cards the focus queue leased them.
KG_DOUBLE_REVIEW_SHARE = env_float("KG_DOUBLE_REVIEW_SHARE", 0.0, low=0.0, high=1.0)
KG_DOUBLE_REVIEW_BELOW = env_float("KG_DOUBLE_REVIEW_BELOW", 0.667, low=0.0, high=1.0)
KG_LEASE_SECONDS = env_int("KG_LEASE_SECONDS", 300, minimum=30)
KG_LEASE_WINDOW = env_int("KG_LEASE_WINDOW", 2, minimum=1)
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
# A vocabulary file (SKOS, OWL) to import: its bytes and its statements at most.
KG_VOCABULARY_MAX_BYTES = env_int("KG_VOCABULARY_MAX_BYTES", 20_000_000, minimum=1)
KG_VOCABULARY_MAX_STATEMENTS = env_int("KG_VOCABULARY_MAX_STATEMENTS", 500_000, minimum=1)
# Reading one document (docs/documents.md, "Limits"): a PDF, Word or HTML file is read in a
# child process with this much address space and processor time; every file's pages,
# characters, paragraphs and inflation (a ratio, and a fixed size) are bounded.
KG_READ_MEMORY_MB = env_int("KG_READ_MEMORY_MB", 1024, minimum=64)
KG_READ_CPU_SECONDS = env_int("KG_READ_CPU_SECONDS", 120, minimum=1)
KG_READ_MAX_PAGES = env_int("KG_READ_MAX_PAGES", 5_000, minimum=1)
KG_READ_MAX_CHARS = env_int("KG_READ_MAX_CHARS", 50_000_000, minimum=1)
KG_READ_MAX_PARAGRAPHS = env_int("KG_READ_MAX_PARAGRAPHS", 200_000, minimum=1)
KG_READ_MAX_INFLATION = env_int("KG_READ_MAX_INFLATION", 100, minimum=1)
KG_READ_MAX_UNPACKED_BYTES = env_int("KG_READ_MAX_UNPACKED_BYTES", 200_000_000, minimum=1)
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
# Build the in-memory name indexes when a process starts (web: search and ask; worker:
# the construction loop's) instead of on the first request or source that needs them.
KG_NAME_INDEX_WARM = env_bool("KG_NAME_INDEX_WARM", False)
# A Server-Timing header (database time and statements, the rest, the total) on the
# Review page's card and decisions, for signed-in users (kgreview.core.server_timing).
KG_SERVER_TIMING = env_bool("KG_SERVER_TIMING", True)
KG_TASK_RETRIES = env_int("KG_TASK_RETRIES", 2)
KG_ITEM_LEASE_SECONDS = env_int("KG_ITEM_LEASE_SECONDS", 900, minimum=1)
KG_DISCOVERY_MIN_SUPPORT = env_int("KG_DISCOVERY_MIN_SUPPORT", 3, minimum=1)
KG_DISCOVERY_MIN_SOURCES = env_int("KG_DISCOVERY_MIN_SOURCES", 2, minimum=1)
KG_WORKER_STALE_SECONDS = env_int("KG_WORKER_STALE_SECONDS", 120, minimum=1)
# /healthz: beat counts as stopped when neither a schedule's last run (beat writes it back
# every 3 minutes) nor a worker's heartbeat (only beat sends that task) is this recent;
# the disk as failing below this many free megabytes in KG_VAR_DIR.
KG_BEAT_STALE_SECONDS = env_int("KG_BEAT_STALE_SECONDS", KG_WORKER_STALE_SECONDS + 180, minimum=1)
KG_HEALTH_MIN_FREE_MB = env_int("KG_HEALTH_MIN_FREE_MB", 50)
# The heal agent compares names only inside blocks (names sharing words or a prefix); a
# block holding more names than this is not compared (its pairs cost too much and say
# little), and the run's stats and page name every block left out.
KG_HEAL_MAX_BLOCK = env_int("KG_HEAL_MAX_BLOCK", 400, minimum=2)
# Asking the graph: refiner rounds (one hop each) after the first walk, the longest
# question, and who plans and critiques (offline rules, or the KG_LLM_* model).
KG_ASK_MAX_ITERATIONS = env_int("KG_ASK_MAX_ITERATIONS", 3)
KG_ASK_QUESTION_MAX = env_int("KG_ASK_QUESTION_MAX", 500, minimum=20)
# The most concepts one walk of a question may meet: each side of a pair question
# ("How is X connected to Y?"), and a set question's answer ("What should I learn before
# X?"), which says so when it is cut ("there may be more").
KG_ASK_CONCEPT_LIMIT = env_int("KG_ASK_CONCEPT_LIMIT", 2000, minimum=10)
KG_ASK_SET_LIMIT = env_int("KG_ASK_SET_LIMIT", 200, minimum=1)
# The most concepts a learning path may hold (the target included). A target that needs
# more is refused in words, with the way to ask for fewer levels (``depth``): a study
# order of tens of thousands of concepts helps nobody, and reading one costs seconds.
KG_LEARNING_PATH_LIMIT = env_int("KG_LEARNING_PATH_LIMIT", 2000, minimum=10)
# The model tokens one ask may spend (planner and critic together; 0: no limit): past it
# the rest of the ask is critiqued offline. Only curators choose a provider per request.
KG_ASK_MAX_TOKENS = env_int("KG_ASK_MAX_TOKENS", 20_000)
KG_ASK_PROVIDER = env_str("KG_ASK_PROVIDER", "offline")
if KG_ASK_PROVIDER not in {"offline", "openai"}:
    raise ImproperlyConfigured(f"KG_ASK_PROVIDER={KG_ASK_PROVIDER!r}: use offline or openai")
# The RDF exports (turtle, skos, owl, shacl; kgreview/exports/CONTEXT.md): every concept,
# edge, type, relation and attribute gets an IRI under this base (ending in "/"), stable
# across exports: ids for concepts and edges, keys for the vocabulary, percent-encoded.
KG_RDF_BASE = env_str("KG_RDF_BASE", "https://kgreview.example/")
if not KG_RDF_BASE.startswith(("http://", "https://")) or not KG_RDF_BASE.endswith("/"):
    raise ImproperlyConfigured(
        f"KG_RDF_BASE={KG_RDF_BASE!r}: give an http(s) IRI ending in a slash, "
        "e.g. https://graph.example.org/"
    )
# Where releases keep their files (docs/releases.md): one folder per release, named after
# it, holding its exports and validation report; never rewritten once the release is cut.
KG_RELEASE_DIR = Path(env_str("KG_RELEASE_DIR", str(VAR_DIR / "releases")))
# A release build whose worker died (its heartbeat stopped for KG_ITEM_STALE_SECONDS) or
# whose task never reached a worker (queued, silent for KG_ITEM_LEASE_SECONDS) is sent to
# the workers again by the reaper's pass, up to this many sends in all; then it is failed
# in words and a curator can retry it from the Releases page.
KG_RELEASE_BUILD_ATTEMPTS = env_int("KG_RELEASE_BUILD_ATTEMPTS", 2, minimum=1)
# Whether every concept must have a type (manage.py validate, the Ontology page's report):
# auto (once the ontology has an active concept type), always, or never.
KG_REQUIRE_TYPES = env_str("KG_REQUIRE_TYPES", "auto")
if KG_REQUIRE_TYPES not in {"auto", "always", "never"}:
    raise ImproperlyConfigured(f"KG_REQUIRE_TYPES={KG_REQUIRE_TYPES!r}: use auto, always or never")
# Which relations the SKOS export writes as SKOS's own semantic relations: KEY:broader,
# KEY:narrower or KEY:related, comma-separated ("A part_of B" is "A skos:broader B").
# A relation not listed keeps its own property (a sub-property of skos:semanticRelation).
KG_SKOS_RELATIONS = env_str("KG_SKOS_RELATIONS", "part_of:broader,related:related")


# How often beat asks every active competency question (a failing one starts a gap search).
KG_COMPETENCY_SCHEDULE_MINUTES = env_int("KG_COMPETENCY_SCHEDULE_MINUTES", 1440, minimum=1)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("KG_LOG_LEVEL", "INFO")},
    # django-axes announces itself at every start; its lockout warnings still show.
    "loggers": {"django.db.backends": {"level": "INFO"}, "axes.apps": {"level": "WARNING"}},
}
