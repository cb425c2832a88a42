from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).parent))

# CI runs the property tests on a fixed sequence of examples, so a run is reproducible
# and a red build is never a coin toss; local runs keep exploring new random examples.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI", "").lower() == "true":
    settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _lexical_unless_marked(request, monkeypatch):
    """Logic tests run lexical-only for speed; ``@pytest.mark.embeddings`` tests use the
    real packaged model through the default ("auto") path."""
    if request.node.get_closest_marker("embeddings") is None:
        monkeypatch.setenv("LIBRARIAN_EMBEDDINGS", "none")
    else:
        monkeypatch.delenv("LIBRARIAN_EMBEDDINGS", raising=False)


POSTGRES_DSN = os.environ.get(
    "LIBRARIAN_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test"
)


@pytest.fixture(scope="session")
def postgres_dsn() -> str:
    """A reachable PostgreSQL DSN.

    In CI (``CI=true``) or with ``LIBRARIAN_REQUIRE_POSTGRES=1`` an unreachable server
    is a test failure, never a skip.
    """
    import psycopg

    try:
        with psycopg.connect(POSTGRES_DSN, connect_timeout=5) as conn:
            conn.execute("select 1")
    except Exception as exc:
        required = (
            os.environ.get("CI", "").lower() == "true"
            or os.environ.get("LIBRARIAN_REQUIRE_POSTGRES") == "1"
        )
        if required:
            pytest.fail(f"PostgreSQL is required here but unreachable at {POSTGRES_DSN}: {exc}")
        pytest.skip(f"PostgreSQL unreachable at {POSTGRES_DSN} (set CI=true to make this fail)")
    return POSTGRES_DSN
