"""The daemon workers behind bounded calls (``on_own_thread``): reused, never shared with a
call that hangs, and rebuilt in a forked child."""

from __future__ import annotations

import multiprocessing
import threading

import pytest

from langgraph_librarian._engine.concurrency import on_own_thread


def _thread() -> threading.Thread:
    return threading.current_thread()


def test_a_finished_call_leaves_its_thread_for_the_next_one():
    # The thread objects are kept alive, so a new thread per call would give 20 of them.
    threads = [on_own_thread(_thread, "librarian-test").result(timeout=5) for _ in range(20)]
    distinct = {id(t) for t in threads}
    # (a call may come before the previous worker is idle again: then a second one starts)
    assert len(distinct) <= 3


def test_a_hung_call_keeps_its_thread_and_later_calls_do_not_wait_behind_it():
    release = threading.Event()
    hung = on_own_thread(lambda: release.wait(30), "librarian-test")
    try:
        assert on_own_thread(lambda: "answered", "librarian-test").result(timeout=5) == "answered"
        assert not hung.done()
    finally:
        release.set()
    assert hung.result(timeout=5) is True


def test_the_thread_carries_the_calls_name_only_while_it_runs():
    started, release = threading.Event(), threading.Event()

    def call() -> str:
        started.set()
        release.wait(5)
        return threading.current_thread().name

    future = on_own_thread(call, "librarian-named")
    started.wait(5)
    assert any(t.name == "librarian-named" for t in threading.enumerate())
    release.set()
    assert future.result(timeout=5) == "librarian-named"
    for _ in range(100):  # renamed once the call returned
        if not any(t.name == "librarian-named" for t in threading.enumerate()):
            break
        threading.Event().wait(0.01)
    assert not any(t.name == "librarian-named" for t in threading.enumerate())


def _in_child(queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    queue.put(on_own_thread(lambda: "child answered", "librarian-test").result(timeout=5))


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="needs the fork start method"
)
def test_a_forked_child_does_not_hand_calls_to_its_parents_workers():
    on_own_thread(_thread, "librarian-test").result(timeout=5)  # leaves an idle worker
    threading.Event().wait(0.05)
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_in_child, args=(queue,))
    child.start()
    child.join(20)
    assert child.exitcode == 0
    assert queue.get(timeout=1) == "child answered"


def test_an_idle_worker_holds_nothing_of_its_last_call():
    import gc
    import weakref

    class Big:
        pass

    made: list[weakref.ref[Big]] = []

    def call() -> Big:
        value = Big()
        made.append(weakref.ref(value))
        return value

    future = on_own_thread(call, "librarian-test")
    future.result(timeout=5)
    del future
    for _ in range(100):  # the worker lets go once it is idle again
        gc.collect()
        if made[0]() is None:
            break
        threading.Event().wait(0.01)
    assert made[0]() is None
