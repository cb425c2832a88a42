"""``librarian ui`` and ``librarian chat`` on the command line: errors first, then the chat."""

from __future__ import annotations

import io
import os
import select
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from langgraph_librarian.cli import main
from langgraph_librarian.ui import ChatService
from langgraph_librarian.ui._terminal import run_terminal_chat
from test_cli import one_error_line


@pytest.fixture
def no_server(monkeypatch):
    """Fail the test if a server starts: bad input must be reported first."""

    def boom(*args, **kwargs):
        raise AssertionError("the server started before the bad input was reported")

    monkeypatch.setattr("langgraph_librarian.ui.launch", boom)


def test_a_corrupt_database_is_one_error_line_and_stays_as_it_was(tmp_path, capsys, no_server):
    db = tmp_path / "chat.db"
    content = b"not a database, but someone's notes\n" * 100
    db.write_bytes(content)
    assert main(["ui", "--db", str(db)]) == 2
    line = one_error_line(capsys)
    assert "is not a readable SQLite database" in line and "left untouched" in line
    assert db.read_bytes() == content
    assert [p.name for p in tmp_path.iterdir()] == ["chat.db"]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["ui", "--port", "0"], "--port must be between 1 and 65535 (got 0)"),
        (["ui", "--port", "70000"], "--port must be between 1 and 65535"),
        (["ui", "--summary-tokens", "5"], "--summary-tokens must be at least 16 (got 5)"),
        (["ui", "--model", "nosuchprovider:model"], "--model"),
        (["chat", "--librarian-model", "nosuchprovider:x"], "--librarian-model"),
    ],
)
def test_bad_options_give_one_error_line(argv, expected, tmp_path, capsys, no_server):
    assert main([*argv, "--db", str(tmp_path / "chat.db")]) == 2
    assert expected in one_error_line(capsys)
    assert not (tmp_path / "chat.db").exists()


def test_database_paths_that_cannot_work(tmp_path, capsys, no_server):
    assert main(["ui", "--db", str(tmp_path)]) == 2
    assert "is a directory" in one_error_line(capsys)
    assert main(["chat", "--db", str(tmp_path / "no" / "chat.db")]) == 2
    assert "does not exist" in one_error_line(capsys)
    foreign = tmp_path / "app.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER)")
    assert main(["ui", "--db", str(foreign)]) == 2
    assert "another application's database" in one_error_line(capsys)


def test_help_lists_ui_and_chat(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "{demo,bench,ui,chat}" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["ui", "--help"])
    out = capsys.readouterr().out
    for option in ("--host", "--port", "--db", "--model", "--librarian-model"):
        assert option in out


def test_terminal_chat_streams_and_starts_new_threads(tmp_path):
    service = ChatService(tmp_path / "chat.db")
    script = io.StringIO(
        "The offsite is in Porto.\n"
        "\n"
        "/strategy bogus\n"
        "/strategy everything\n"
        "Where is the offsite?\n"
        "/new\n"
        "Hello again.\n"
        "/threads\n"
        "/nonsense\n"
        "/quit\n"
        "never read\n"
    )
    out = io.StringIO()
    assert run_terminal_chat(service, stdin=script, out=out) == 0
    text = out.getvalue()
    assert text.count("No chat model is configured") == 3
    assert "strategy: everything" in text and "strategy Everything: sent" in text
    assert "unknown strategy 'bogus': choose one of" in text
    threads = service.list_threads()
    assert len(threads) == 2 and {t.turns for t in threads} == {1, 2}
    assert "/new " in text  # the help after an unknown command
    assert "never read" not in text
    service.close()


def test_librarian_chat_reopens_a_thread_from_the_web_ui(tmp_path):
    db = tmp_path / "chat.db"
    service = ChatService(db)
    thread = service.new_thread_id()
    list(service.send(thread, "I'm allergic to peanuts.", "librarian"))
    service.close()
    result = subprocess.run(
        [sys.executable, "-m", "langgraph_librarian.cli", "chat", "--db", str(db)],
        input=f"/open {thread}\nWhat am I allergic to?\n/open chat-nope\n/open\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert f"thread {thread}: 1 messages" in result.stdout
    assert "user: I'm allergic to peanuts." in result.stdout
    assert "no saved thread 'chat-nope'" in result.stdout
    assert "usage: /open ID (see /threads)" in result.stdout
    reopened = ChatService(db)
    assert [h["content"] for h in reopened.history(thread)] == [
        "I'm allergic to peanuts.",
        "What am I allergic to?",
    ]
    reopened.close()


def _read_until(fd: int, marker: bytes, seen: bytearray, limit: float = 120.0) -> None:
    """Read the terminal ``fd`` until ``marker`` has appeared (or fail after ``limit`` s)."""
    deadline = time.monotonic() + limit
    while marker not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"{marker!r} never came: {bytes(seen[-2000:])!r}"
        if select.select([fd], [], [], left)[0]:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the other end closed
                chunk = b""
            assert chunk, f"{marker!r} never came: {bytes(seen[-2000:])!r}"
            seen += chunk


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_librarian_chat_at_a_terminal_has_line_editing_and_a_prompt(tmp_path):
    # At a terminal, stdin was read raw with no prompt: the arrow keys pressed to fix a
    # typo went into the message ("helo^[[D^[[Dl" was saved and sent to the model).
    import pty

    db = tmp_path / "chat.db"
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "LIBRARIAN_EMBEDDINGS": "none"}
    command = [sys.executable, "-m", "langgraph_librarian.cli", "chat", "--db", str(db)]
    process = subprocess.Popen(
        [*command, "--no-recall"], stdin=slave, stdout=slave, stderr=slave, env=env
    )
    os.close(slave)
    seen = bytearray()
    try:
        _read_until(master, b"/help for commands", seen)
        _read_until(master, b"> ", seen)  # the prompt
        os.write(master, b"helo\x1b[D\x1b[Dl\r")  # Left, Left, then the missing "l"
        _read_until(master, b"recent turns", seen)  # the turn's report
        os.write(master, b"/quit\r")
        assert process.wait(60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    service = ChatService(db, scope=None)
    try:
        [thread] = service.list_threads()
        assert service.history(thread.thread_id) == [{"role": "user", "content": "hello"}]
    finally:
        service.close()


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_librarian_chat_at_a_terminal_takes_a_pasted_paragraph_as_one_message(tmp_path):
    # Pasting three lines sent three messages, each answered on its own.
    import pty

    db = tmp_path / "chat.db"
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "LIBRARIAN_EMBEDDINGS": "none"}
    command = [sys.executable, "-m", "langgraph_librarian.cli", "chat", "--db", str(db)]
    process = subprocess.Popen(
        [*command, "--no-recall"], stdin=slave, stdout=slave, stderr=slave, env=env
    )
    os.close(slave)
    seen = bytearray()
    try:
        _read_until(master, b"> ", seen)
        os.write(master, b"The venue is Porto.\rLunch is at noon.\rBring a laptop.\r")
        _read_until(master, b"recent turns", seen)
        os.write(master, b"/quit\r")
        assert process.wait(60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    service = ChatService(db, scope=None)
    try:
        [thread] = service.list_threads()
        assert service.history(thread.thread_id) == [
            {"role": "user", "content": "The venue is Porto.\nLunch is at noon.\nBring a laptop."}
        ]
    finally:
        service.close()


def test_the_core_does_not_import_gradio():
    code = (
        "import sys, langgraph_librarian, langgraph_librarian.ui, langgraph_librarian.cli; "
        "assert 'gradio' not in sys.modules, 'gradio imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_a_missing_gradio_is_named_with_its_extra(tmp_path, capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "gradio" else real(name, *a),
    )
    assert main(["ui", "--db", str(tmp_path / "chat.db")]) == 2
    assert "pip install 'langgraph-librarian[ui]'" in one_error_line(capsys)
    assert not Path(tmp_path / "chat.db").exists()


def test_the_default_database_is_in_the_user_data_directory(tmp_path, capsys, monkeypatch):
    data = tmp_path / "xdg-data"
    work = tmp_path / "checkout"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.setattr("sys.stdin", io.StringIO("/quit\n"))
    assert main(["chat"]) == 0
    expected = data / "langgraph-librarian" / "librarian-chat.db"
    assert f"chat database: {expected}" in capsys.readouterr().err
    assert expected.exists()
    assert list(work.iterdir()) == []  # nothing written into the current directory

    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    from langgraph_librarian.cli import user_data_dir

    assert user_data_dir() == tmp_path / "home" / ".local" / "share" / "langgraph-librarian"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/path")  # invalid per the spec: ignored
    assert user_data_dir() == tmp_path / "home" / ".local" / "share" / "langgraph-librarian"
    monkeypatch.setattr("sys.platform", "darwin")
    assert user_data_dir() == tmp_path / "home" / "Library" / "Application Support" / (
        "langgraph-librarian"
    )
    monkeypatch.setattr("sys.platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "local"))
    assert user_data_dir() == tmp_path / "local" / "langgraph-librarian"

    # --db still wins, and its path is printed too.
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.setattr("sys.stdin", io.StringIO("/quit\n"))
    assert main(["chat", "--db", str(tmp_path / "mine.db")]) == 0
    assert f"chat database: {tmp_path / 'mine.db'}" in capsys.readouterr().err


def test_a_data_directory_that_cannot_be_made_is_one_error_line(tmp_path, capsys, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.setenv("XDG_DATA_HOME", str(blocker))
    assert main(["chat"]) == 2
    line = one_error_line(capsys)
    assert "cannot create the chat's data folder" in line and "--db PATH" in line


@pytest.mark.parametrize("thread", ["../x", "a/b", "", "x" * 200])
def test_librarian_chat_refuses_a_bad_thread_id_up_front(tmp_path, capsys, thread):
    code = main(["chat", "--thread", thread, "--db", str(tmp_path / "chat.db")])
    assert code == 2
    err = capsys.readouterr().err
    assert "--thread" in err and ("thread id is 1-128" in err or "needs an id" in err)


def test_librarian_ui_says_its_address_and_not_gradios_share_hint(tmp_path, monkeypatch, capsys):
    """Gradio's banner tells the reader to "set share=True in launch()", which the command
    cannot do: the command prints the address itself and launches Gradio quietly."""
    seen: dict[str, object] = {}

    def fake_launch(service, **kwargs):
        seen.update(kwargs)

    monkeypatch.setattr("langgraph_librarian.ui.launch", fake_launch)
    assert main(["ui", "--db", str(tmp_path / "chat.db"), "--port", "7861"]) == 0
    assert seen["quiet"] is True
    assert "http://127.0.0.1:7861" in capsys.readouterr().err


def test_librarian_ui_on_a_busy_port_fails_before_saying_it_starts(tmp_path, monkeypatch, capsys):
    import socket

    launched: list[object] = []
    monkeypatch.setattr("langgraph_librarian.ui.launch", lambda *a, **k: launched.append(a))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(["ui", "--db", str(tmp_path / "chat.db"), "--port", str(port)])
    err = capsys.readouterr().err
    assert code == 2 and not launched
    assert f"cannot serve on 127.0.0.1:{port}" in err and "starting the web chat" not in err


def test_terminal_chat_tells_unknown_commands_from_messages_that_start_with_a_slash(tmp_path):
    service = ChatService(tmp_path / "chat.db")
    script = io.StringIO(
        "/bogus\n/etc/hosts is broken on my laptop, help\n//new is a word I like\n/quit\n"
    )
    out = io.StringIO()
    assert run_terminal_chat(service, stdin=script, out=out) == 0
    text = out.getvalue()
    assert "unknown command /bogus" in text
    (thread,) = service.list_threads()
    saved = [m["content"] for m in service.history(thread.thread_id)]
    assert saved == ["/etc/hosts is broken on my laptop, help", "/new is a word I like"]
    service.close()


def test_terminal_chat_says_when_the_thread_to_reopen_does_not_exist(tmp_path):
    service = ChatService(tmp_path / "chat.db")
    out = io.StringIO()
    assert run_terminal_chat(service, thread_id="ab", stdin=io.StringIO("/quit\n"), out=out) == 0
    assert "no saved thread 'ab': this is a new thread" in out.getvalue()
    service.close()


@pytest.mark.parametrize("path", ["/proc/librarian-chat.db", "/dev/null"])
def test_a_database_that_cannot_be_written_is_one_error_line(path, capsys, no_server):
    """A read-only file system or a device gave a traceback (sqlite3.OperationalError)."""
    assert main(["chat", "--db", path]) == 2
    assert "cannot be opened for writing" in one_error_line(capsys)


def test_a_port_in_use_is_one_error_line_naming_the_option(tmp_path, capsys, monkeypatch):
    def taken(service, **kwargs):
        raise OSError("Cannot find empty port in range: 7861-7861. Set GRADIO_SERVER_PORT")

    monkeypatch.setattr("langgraph_librarian.ui.launch", taken)
    assert main(["ui", "--db", str(tmp_path / "chat.db"), "--port", "7861"]) == 2
    line = one_error_line(capsys)
    assert "choose another with --port" in line and "GRADIO_SERVER_PORT" not in line


def test_terminal_chat_in_a_thread_deleted_elsewhere_goes_on_in_a_new_one(tmp_path):
    # The web chat deleted the thread the terminal was in: the next line brought it back
    # (listed again, with only that line).
    db = tmp_path / "chat.db"
    service, web = ChatService(db), ChatService(db)

    def lines():
        yield "My locker code is 4471.\n"
        (thread,) = web.list_threads()
        web.delete_thread(thread.thread_id)
        yield "And the bike lock?\n"
        yield "And the bike lock?\n"
        yield f"/open {thread.thread_id}\n"

    out = io.StringIO()
    try:
        assert run_terminal_chat(service, stdin=lines(), out=out) == 0
        text = out.getvalue()
        assert "(not sent: thread chat-" in text and "was deleted" in text
        assert "now in the new thread chat-" in text
        (thread,) = service.list_threads()
        assert [h["content"] for h in service.history(thread.thread_id)] == ["And the bike lock?"]
        assert text.rstrip().endswith("was deleted (see /threads)")
        assert not service.is_saved(text.split("(not sent: thread ")[1].split()[0])
        # --thread naming a deleted thread: said, and a new thread is used
        out = io.StringIO()
        deleted = text.split("(not sent: thread ")[1].split()[0]
        run_terminal_chat(service, thread_id=deleted, stdin=io.StringIO("Hi.\n"), out=out)
        assert f"thread {deleted!r} was deleted: this is a new thread" in out.getvalue()
        assert not service.is_saved(deleted) and len(service.list_threads()) == 2
    finally:
        service.close()
        web.close()
