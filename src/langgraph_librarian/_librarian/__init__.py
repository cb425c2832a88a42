"""The Librarian turn (a feature): ``turn`` (select and hydrate, index) and ``gist``
(the running summary next to the selection). The graph nodes, the ``create_agent``
middleware and the ``pre_model_hook`` are thin faces over it."""
