"""The explorer in headless Chromium, a file per subject: fixtures in conftest.py,
helpers in support.py."""
