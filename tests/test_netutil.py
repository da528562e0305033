"""papergym.netutil.bind: the one socket binder both servers (serve-reward, fake-llm) use."""

from __future__ import annotations

import socket

import pytest

from papergym.errors import BadInputError
from papergym.netutil import bind


def test_bind_port_zero_listens_on_a_free_port_at_once() -> None:
    with bind("127.0.0.1", 0) as sock:
        port = sock.getsockname()[1]
        assert port > 0
        # listening before any server runs: a client that connects now is queued, not refused
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            pass


def test_bind_taken_port_and_bad_host_are_one_line_errors() -> None:
    with bind("127.0.0.1", 0) as holder:
        port = holder.getsockname()[1]
        with pytest.raises(BadInputError) as taken:
            bind("127.0.0.1", port)
    assert str(taken.value) == (
        f"port {port} on 127.0.0.1 is in use (another server?); choose one with --port"
    )
    with pytest.raises(BadInputError) as bad:
        bind("no-such-host.invalid", 0)
    assert str(bad.value).startswith("cannot listen on no-such-host.invalid: ")
    assert "\n" not in str(bad.value)
