"""Chat models given as objects or ``"provider:model"`` strings.

A string is checked when the config is built (is the provider's package installed?)
and turned into a model on first use, with the settings the library's own calls need:
a client timeout, no client-side retries (the library retries transient failures
itself, so attempts do not multiply) and an output limit.

The output limit must reach the server. ``langchain-openai`` sends it as
``max_completion_tokens``, which OpenAI reads but llama-cpp-python's server and older
llama.cpp and Ollama builds ignore (a summary then runs for thousands of tokens). For an
OpenAI-compatible client pointed at another server (a base URL that is not OpenAI's), the
limit also goes out as ``max_tokens``, which every such server reads; OpenAI itself
rejects ``max_tokens`` for its reasoning models, so it gets only the new field.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable

from langgraph_librarian.errors import ModelConfigError

__all__ = ["MAX_OUTPUT_TOKENS", "LazyModel", "build_model", "check_model_spec"]

MAX_OUTPUT_TOKENS = {"indexer_model": 400, "selector_model": 1024}
"""Output limits for models built from strings, per role: a summary is asked for in
about 100 tokens (400 leaves room), a selection may reason before its ``IDs:`` line."""

_TIMEOUT_FIELDS = ("timeout", "request_timeout", "default_request_timeout")
_RETRY_FIELDS = ("max_retries",)
_OUTPUT_FIELDS = ("max_tokens", "max_output_tokens", "num_predict")


def _provider_package(spec: str) -> tuple[str, str] | None:
    """(provider, import name) for a ``provider:model`` string LangChain knows."""
    try:
        from langchain.chat_models.base import _BUILTIN_PROVIDERS
    except ImportError:  # pragma: no cover - a future langchain may move it; skip the check
        return None
    provider = spec.split(":", 1)[0] if ":" in spec else ""
    known = _BUILTIN_PROVIDERS.get(provider)
    if known is None:
        return None
    return provider, known[0]


def check_model_spec(spec: str, slot: str) -> None:
    """Fail early, with the package to install, when a provider package is missing.

    Raises:
        ModelConfigError: the string names a known provider whose package is not
            installed (a ``ValueError`` and a ``LibrarianError``, as at first use).
    """
    if not spec.strip():
        raise ValueError(f"{slot} must not be an empty string")
    found = _provider_package(spec)
    if found is None:
        return  # unknown prefix: init_chat_model will infer or explain at first use
    provider, module = found
    top = module.split(".")[0]
    if importlib.util.find_spec(top) is None:
        dist = top.replace("_", "-")
        raise ModelConfigError(
            f"{slot}={spec!r} needs the {provider!r} integration: pip install {dist}"
        )


def _field(cls: type[Any], names: tuple[str, ...]) -> str | None:
    fields: dict[str, Any] = getattr(cls, "model_fields", {})
    for name in names:
        if name in fields:
            return name
        for field_name, info in fields.items():
            if getattr(info, "alias", None) == name:
                return field_name
    return None


def _custom_base_url(model: BaseChatModel) -> bool:
    """An OpenAI-compatible client pointed at a server that is not OpenAI's."""
    base = getattr(model, "openai_api_base", None)
    root = getattr(model, "root_client", None)
    if not base and root is not None:
        base = str(getattr(root, "base_url", "") or "")
    return bool(base) and "api.openai.com" not in str(base)


def build_model(
    spec: str, slot: str, *, timeout: float | None, role: str | None = None
) -> BaseChatModel:
    """Create the chat model for ``spec`` with a client timeout, no client retries and
    an output limit, where the provider's class has such settings.

    ``role`` (``"indexer_model"`` or ``"selector_model"``) picks the output limit of
    :data:`MAX_OUTPUT_TOKENS`; by default ``slot``'s (1,024 for other names).

    Raises:
        ModelConfigError: (a ``ValueError``) the model cannot be created (unknown
            provider, missing package, missing credentials...), with the provider's reason.
    """
    from langchain.chat_models import init_chat_model

    try:
        probe = init_chat_model(spec)
    except Exception as exc:
        raise ModelConfigError(f"cannot create {slot} from {spec!r}: {exc}") from exc
    if not isinstance(probe, BaseChatModel):
        raise ModelConfigError(f"{slot}={spec!r} did not produce a chat model")
    cls = type(probe)
    settings: dict[str, Any] = {}
    if timeout is not None and (name := _field(cls, _TIMEOUT_FIELDS)):
        settings[name] = timeout
    if name := _field(cls, _RETRY_FIELDS):
        settings[name] = 0
    limit = MAX_OUTPUT_TOKENS.get(role or slot, 1024)
    if name := _field(cls, _OUTPUT_FIELDS):
        settings[name] = limit
    if "extra_body" in getattr(cls, "model_fields", {}) and _custom_base_url(probe):
        settings["extra_body"] = {**(getattr(probe, "extra_body", None) or {}), "max_tokens": limit}
    if not settings:
        return probe
    try:
        model = init_chat_model(spec, **settings)
    except Exception:  # a provider that rejects one of them: keep its defaults
        return probe
    return model if isinstance(model, BaseChatModel) else probe


# A string is checked when given and built on first use: building a graph must not need an
# API key. A string that cannot become a model is a configuration error
# (:class:`~langgraph_librarian.errors.ModelConfigError`), never failed open, so a broken
# summary model is noticed instead of letting the history grow for ever.
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
