"""Fixtures shared by the ``yacht_play`` tests: a throwaway PostgreSQL server (see :mod:`tests.yacht_play.serve_support`)."""

from tests.yacht_play.serve_support import postgres_url  # noqa: F401  (a fixture, found by pytest here)
