"""Tools that rebuild the evaluation manuals from Debian documentation packages.

Run from the repository root (``python -m evaluation.tools.manual NAME``); the app never
imports them.
"""
