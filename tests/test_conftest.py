"""The test suite's own helpers: a port for a test's server that no other process is handed meanwhile."""
import socket

import pytest

from tests.conftest import _ephemeral_ports, _port_slice, free_port


def test_a_free_port_is_outside_the_range_the_kernel_hands_out_and_can_be_bound():
    low, high = _ephemeral_ports()
    port = free_port()
    assert not low <= port <= high
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))  # free: raises otherwise


def test_each_xdist_process_picks_from_a_slice_of_its_own(monkeypatch):
    slices = []
    for worker in ("gw0", "gw1", "gw2"):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        slices.append(set(_port_slice()))
        assert free_port() in slices[-1]
    assert not slices[0] & slices[1] and not slices[1] & slices[2] and not slices[0] & slices[2]


def test_a_port_in_use_is_never_given(monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw5")
    ports = _port_slice()
    held = []
    try:
        for port in ports:  # take the whole slice but one port
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                s.close()
                continue
            held.append(s)
        last = held.pop()
        left = last.getsockname()[1]
        last.close()
        assert free_port() == left
        held.append(socket.socket())
        held[-1].bind(("127.0.0.1", left))
        with pytest.raises(RuntimeError, match="no free port"):
            free_port()
    finally:
        for s in held:
            s.close()
