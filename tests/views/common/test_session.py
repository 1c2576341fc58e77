"""Where job updates go: a notebook's kernel loop (in order, flushed by ``wait``), and a closed state says so."""
import threading

from explorer.views.common.session import default_dispatcher, kernel_dispatcher
from explorer.views.gp_bootstrap.state import GPBootstrapState


class FakeLoop:
    """Stands in for the kernel's tornado IOLoop: records the callbacks other threads schedule."""

    def __init__(self):
        self.scheduled = []

    def add_callback(self, callback):
        self.scheduled.append(callback)


def test_kernel_dispatcher_applies_updates_from_threads_on_its_own_thread_in_order():
    loop, applied = FakeLoop(), []
    dispatch = kernel_dispatcher(loop)
    worker = threading.Thread(target=lambda: [dispatch(lambda i=i: applied.append(i)) for i in range(5)])
    worker.start()
    worker.join()
    assert applied == [] and len(loop.scheduled) == 5  # nothing ran on the worker thread

    other = threading.Thread(target=dispatch.flush)  # a flush off the kernel's thread does nothing
    other.start()
    other.join()
    assert applied == []

    loop.scheduled[0]()  # the first scheduled call applies the whole queue, oldest first
    assert applied == [0, 1, 2, 3, 4]
    for callback in loop.scheduled[1:]:
        callback()
    assert applied == [0, 1, 2, 3, 4]


def test_outside_a_kernel_updates_apply_at_once():
    applied = []
    default_dispatcher()(lambda: applied.append(1))
    assert applied == [1]


def test_a_closed_state_says_so_when_asked_to_compute():
    state = GPBootstrapState(dataset="toy")
    state.close()
    state.refresh()
    assert "closed" in state.error and "new state" in state.error
