"""WSGI entry point (gunicorn kgreview.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgreview.settings")

application = get_wsgi_application()
