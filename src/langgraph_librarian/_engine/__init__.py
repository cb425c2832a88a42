"""The engine's private primitives, shared by indexing, selection and hydration.

- ``messages``, ``text``, ``history``: message text, hashes and keys, tokenizing and
  stemming, provider-valid histories.
- ``view``: the per-history view a turn extends by its new messages; ``state_cache``: the
  index read from graph state, parsed once.
- ``calls`` (every model call the library makes for itself), ``failures`` (what a
  failure means: retry, fail open, raise), ``models`` (chat models from strings),
  ``concurrency``.
- ``static``, ``wordpiece``, ``onnx``, ``e5``, ``vectors``: the embedding models and the
  packaged model files (``model_data/``).

Nothing here knows about graph runs: that is the kit's job (``_kit``).
"""
