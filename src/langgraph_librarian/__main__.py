"""``python -m langgraph_librarian``: the ``librarian`` command."""

from langgraph_librarian.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
