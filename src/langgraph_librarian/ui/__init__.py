"""``librarian ui``: a web chat that shows what the Librarian chose for each answer.

The chat itself (:class:`ChatService`: threads, streamed turns, the strategy switch, the
demo conversation, persistence in one SQLite file) has no web framework in it; the
Gradio page (:func:`create_app`, extra ``[ui]``) and the terminal chat are thin faces
over it. Threads of one file share a recall scope (:class:`ScopeRecall`): a new thread
recalls what the others said; each thread keeps the scope it started in. Gradio is
imported only when :func:`create_app` is called.

Example:
    ```python
    from langgraph_librarian.ui import ChatService, launch

    service = ChatService("chat.db")          # offline: shows the context, no answers
    launch(service, host="127.0.0.1", port=7860)
    ```
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langgraph_librarian.ui._service import ChatService

if TYPE_CHECKING:
    from gradio import Blocks
else:
    # Gradio is imported when the page is built, not with this package: at run time
    # (``typing.get_type_hints``, documentation tools) the page's type reads as ``Any``.
    Blocks = Any

__all__ = [
    "ChatService",
    "create_app",
    "launch",
]


GRADIO_MISSING = (
    "the web UI needs Gradio: pip install 'langgraph-librarian[ui]' "
    "(from a checkout: pip install -e '.[ui]')"
)


def _app_module() -> Any:
    try:
        from langgraph_librarian.ui import _app
    except ModuleNotFoundError as exc:
        if exc.name != "gradio" and not str(exc.name).startswith("gradio."):
            raise
        raise ImportError(GRADIO_MISSING) from exc
    return _app


def create_app(service: ChatService, **options: Any) -> Blocks:
    """The Gradio page over ``service`` (needs ``pip install 'langgraph-librarian[ui]'``).

    Serve it with :func:`launch`, which also sets the page's theme and styles.

    Raises:
        ImportError: Gradio is not installed (the message names the extra).
    """
    return _app_module().build_app(service, **options)  # type: ignore[no-any-return]


def launch(
    service: ChatService,
    *,
    host: str = "127.0.0.1",
    port: int = 7860,
    block: bool = True,
    quiet: bool = False,
) -> Blocks:
    """Serve the page for ``service`` on ``host:port`` (blocks unless ``block=False``).

    Raises:
        ImportError: Gradio is not installed (the message names the extra).
    """
    app = _app_module().launch(service, host=host, port=port, block=block, quiet=quiet)
    return app  # type: ignore[no-any-return]
