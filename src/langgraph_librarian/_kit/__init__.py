"""The turn kit: what every feature and face needs from a run, written once.

- :mod:`.run`: the run's config, runtime, context and thread id (one lookup).
- :mod:`.state`: messages read from graph state; placing a message after the system prompt.
- :mod:`.node`: :class:`~.node.LibrarianNode`, the sync + async graph node every face builds.
- :mod:`.cache`: :class:`~.cache.BoundedCache`, the one per-turn/per-thread cache policy.
- :mod:`.background`: indexing in a worker thread, one at a time per session.

Model calls (the config's timeout, retries, deadline, the no-stream tag, the user's
callbacks) go through :mod:`langgraph_librarian._engine.calls`, and what a failure
means (retry, fail open, raise) is decided in :mod:`langgraph_librarian._engine.failures`;
both sit in the engine, which calls models itself (LLM selector, model summaries).

Layering: the kit imports only the engine; features import the kit; faces import
features and the kit (``tests/test_layers.py``).
"""
