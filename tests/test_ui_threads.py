"""The chat's threads across tabs and processes: deleted threads stay deleted, two
servers on one ``--db`` file take turns, and the public functions' hints resolve."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from langgraph_librarian.ui import ChatService
from langgraph_librarian.ui._service import MessageRejected, ThreadDeleted, TurnWaiting


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


# -- a deleted thread stays deleted ---------------------------------------------------------------


def test_a_message_to_a_thread_deleted_elsewhere_is_refused_not_saved_into_a_new_copy(
    tmp_path: Path,
) -> None:
    # One tab deleted the thread; another tab still showing it sent a message: the thread
    # came back in the list with only that message (its title, "1 turn"), as if nothing
    # had been deleted.
    db = tmp_path / "chat.db"
    tab = ChatService(db)
    other = ChatService(db)  # another server (or the terminal chat) on the same file
    try:
        list(tab.send("chat-doomed", "My locker code is 4471.", "librarian"))
        assert tab.delete_thread("chat-doomed") >= 1
        for service in (tab, other):
            with pytest.raises(ThreadDeleted, match="deleted"):
                list(service.send("chat-doomed", "And the bike lock?", "librarian"))
            assert service.is_deleted("chat-doomed")
        assert tab.list_threads() == [] and tab.history("chat-doomed") == []
        assert not tab.is_saved("chat-doomed")
        assert issubclass(ThreadDeleted, MessageRejected)  # callers that catch it go on
    finally:
        tab.close()
        other.close()
    reopened = ChatService(db)  # the id stays dead after a restart
    try:
        assert reopened.is_deleted("chat-doomed")
        with pytest.raises(ThreadDeleted):
            list(reopened.send("chat-doomed", "Hello again", "librarian"))
    finally:
        reopened.close()


def test_deleting_a_thread_with_nothing_saved_changes_nothing(tmp_path: Path) -> None:
    service = ChatService(tmp_path / "chat.db")
    try:
        fresh = service.new_thread_id()
        assert not service.is_saved(fresh)
        assert service.delete_thread(fresh) == 0
        assert not service.is_deleted(fresh)  # never used: the id can still be used
        assert service.list_threads() == []
        list(service.send(fresh, "A first message.", "librarian"))
        assert service.is_saved(fresh) and [t.thread_id for t in service.list_threads()] == [fresh]
    finally:
        service.close()


# -- two processes on one file --------------------------------------------------------------------

_WORKER = """
import sys, time
sys.path.insert(0, {tests!r})
from fakes import ScriptedChatModel
from langgraph_librarian.ui import ChatService

db, role, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
model = ScriptedChatModel(script=lambda messages: "reply from " + role, latency=0.3)
service = ChatService(db, model=model)
while time.time() < start:
    time.sleep(0.01)
for n in range(3):
    events = list(service.send("chat-shared", role + " message " + str(n), "librarian"))
    assert events[-1].error is None, events[-1].error
service.close()
print("done")
"""


def test_two_processes_answering_one_thread_keep_every_turn(tmp_path: Path) -> None:
    # Two `librarian ui` servers on one --db answering the same thread at once: each
    # turn saved a copy of the thread with only its own turn, so half of the messages
    # were lost (the list still counted every turn).
    db = tmp_path / "chat.db"
    ChatService(db).close()  # the tables exist before the workers start
    worker = tmp_path / "worker.py"
    worker.write_text(_WORKER.format(tests=str(Path(__file__).parent)))
    start = time.time() + 6  # both are up (imports take a while) before either sends
    processes = [
        subprocess.Popen(
            [sys.executable, str(worker), str(db), role, str(start)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for role in ("A", "B")
    ]
    for process in processes:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0 and out.strip() == "done", err[-2000:]
    service = ChatService(db)
    try:
        history = service.history("chat-shared")
        asked = sorted(line["content"] for line in history if line["role"] == "user")
        assert asked == sorted(f"{role} message {n}" for role in "AB" for n in range(3))
        assert len(history) == 12  # every question with its answer
        assert service.threads.get("chat-shared").turns == 6
    finally:
        service.close()


_HOLDER = """
import sys, time
from langgraph_librarian.ui import ChatService

service = ChatService(sys.argv[1])
with service._lock("chat-busy"):
    print("holding", flush=True)
    sys.stdin.readline()
service.close()
"""


def test_a_turn_in_another_process_is_seen_and_waited_for(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    service = ChatService(db)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "holding"
        assert service.answering("chat-busy")  # a page reloaded now says an answer is coming
        assert not service.answering("chat-idle")
        with pytest.raises(MessageRejected, match="being written"):
            service.delete_thread("chat-busy")
        events = service.send("chat-busy", "Are you there?", "librarian")
        assert isinstance(next(events), TurnWaiting)  # it waits for the other process
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert [event.kind for event in events] == ["saving", "finished"]
        assert not service.answering("chat-busy")
        assert service.history("chat-busy") == [{"role": "user", "content": "Are you there?"}]
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait(30)
        service.close()


def test_two_services_in_one_process_share_the_locks_and_close_in_any_order(
    tmp_path: Path,
) -> None:
    db = tmp_path / "chat.db"
    first, second = ChatService(db), ChatService(db)
    with first._lock("chat-x"):
        assert second.answering("chat-x")
    first.close()
    first.close()  # twice: harmless, and the second service's locks still work
    with second._lock("chat-y"):
        assert second.answering("chat-y")
    second.close()


_SETTING_UP = """
import sys
from pathlib import Path
from langgraph_librarian.ui._db import ThreadLocks

locks = ThreadLocks.for_path(Path(sys.argv[1]))
with locks.setting_up():
    print("setting up", flush=True)
    sys.stdin.readline()
"""


def test_the_tables_are_created_by_one_process_at_a_time(tmp_path: Path) -> None:
    # Two servers started together on a new file ran LangGraph's store migrations at
    # once: one crashed with "sqlite3.OperationalError: duplicate column name: expires_at".
    db = tmp_path / "chat.db"
    holder = subprocess.Popen(
        [sys.executable, "-c", _SETTING_UP, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    opened: list[ChatService] = []
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "setting up"
        opening = threading.Thread(target=lambda: opened.append(ChatService(db)))
        opening.start()
        opening.join(1.5)
        assert opening.is_alive() and not opened  # it waits for the other process
        holder.stdin.write("\n")
        holder.stdin.flush()
        opening.join(60)
        assert len(opened) == 1
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait(30)
        for service in opened:
            service.close()
