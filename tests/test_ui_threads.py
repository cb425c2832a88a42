"""The chat's threads across tabs and processes: deleted threads stay deleted, two
servers on one ``--db`` file take turns, and the public functions' hints resolve."""

from __future__ import annotations

import subprocess
import sys


def test_the_ui_functions_type_hints_resolve_without_importing_gradio() -> None:
    # typing.get_type_hints(create_app) raised NameError: name 'gr' is not defined (the
    # return annotation named a module imported only under TYPE_CHECKING).
    code = (
        "import inspect, sys, typing\n"
        "import langgraph_librarian.ui as ui\n"
        "for name in ui.__all__:\n"
        "    obj = getattr(ui, name)\n"
        "    targets = [obj] + ([m for _, m in inspect.getmembers(obj, inspect.isfunction)]"
        " if inspect.isclass(obj) else [])\n"
        "    for target in targets:\n"
        "        typing.get_type_hints(target)\n"
        "assert 'gradio' not in sys.modules, 'gradio imported'\n"
        "print(typing.get_type_hints(ui.launch)['return'])\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "typing.Any"
