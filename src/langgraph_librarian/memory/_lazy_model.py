"""Chat models given as ``"provider:model"`` strings: checked now, created on first use.

Building a graph must not need an API key, so a string is only checked when it is
given (``_models.check_model_spec``: is the provider's package installed?) and turned
into a model the first time it is needed. A string that cannot become a model (a typo
in the provider, missing credentials) is a configuration error: it raises
:class:`ModelConfigError` (a ``ValueError``) instead of failing open, so a broken
summary model is noticed instead of letting the history grow for ever.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from langchain_core.runnables import Runnable

from langgraph_librarian._calls import status_code
from langgraph_librarian._models import check_model_spec
from langgraph_librarian.errors import LibrarianError

__all__ = ["LazyModel", "ModelConfigError", "is_configuration_error"]

_CONFIGURATION_STATUS = frozenset({401, 403, 404})
"""Bad key, no access, unknown model: retrying or waiting will not help."""


class ModelConfigError(LibrarianError, ValueError):
    """A model string that cannot become a model (unknown provider, missing credentials)."""


def is_configuration_error(exc: BaseException) -> bool:
    """True for failures only the user can fix: a model that cannot be created, a
    provider answering 401/403/404. These raise; everything else fails open."""
    return isinstance(exc, ModelConfigError) or status_code(exc) in _CONFIGURATION_STATUS


class LazyModel:
    """A model object as given, or a string checked now and built on first :meth:`get`.

    Args:
        model: A model (any Runnable) or a ``"provider:model"`` string.
        slot: Name used in error messages (``"summary_model"``...).
        build: Creates the model from the string (e.g. ``_models.build_model`` for the
            library's own calls, ``init_chat_model`` for the user's chat model).
    """

    def __init__(
        self,
        model: Runnable[Any, Any] | str,
        slot: str,
        build: Callable[[str], Runnable[Any, Any]],
    ) -> None:
        if isinstance(model, str):
            check_model_spec(model, slot)
        elif not isinstance(model, Runnable):
            raise TypeError(
                f"{slot} must be a chat model or a 'provider:model' string, "
                f"not {type(model).__name__}"
            )
        self.spec = model
        self.slot = slot
        self._build = build
        self._model: Runnable[Any, Any] | None = None if isinstance(model, str) else model
        self._lock = threading.Lock()

    def get(self) -> Runnable[Any, Any]:
        """The model (created from the string the first time).

        Raises:
            ModelConfigError: the string cannot become a model.
        """
        if self._model is None:
            with self._lock:
                if self._model is None:
                    try:
                        self._model = self._build(str(self.spec))
                    except Exception as exc:
                        reason = str(exc)  # build_model already says what and why
                        if not isinstance(exc, ValueError):
                            reason = f"cannot create {self.slot} from {self.spec!r}: {exc}"
                        raise ModelConfigError(reason) from exc
        return self._model
