"""Listening sockets for PaperGym's servers (``serve-reward``, ``fake-llm``).

Both servers bind their socket before uvicorn starts, so that the port is known up front
(``port=0`` picks a free one, shown in the start line) and a client that connects at once is
queued rather than refused; a taken port or a bad address is one line, exit 2, not a traceback
from inside uvicorn.
"""

from __future__ import annotations

import errno
import socket

from papergym.errors import BadInputError

DEFAULT_BACKLOG = 4096
"""Connections the kernel queues before ``accept``: large, so bursts of hundreds of clients
(the reward's load test, the fake LLM under a concurrent build) are queued, not refused."""


def bind(host: str, port: int, backlog: int = DEFAULT_BACKLOG) -> socket.socket:
    """A socket listening on ``host:port``; a taken port or a bad address is a one-line error."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as error:
        raise BadInputError(None, f"cannot listen on {host}: {error.strerror}") from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as error:
        sock.close()
        if error.errno == errno.EADDRINUSE:
            raise BadInputError(
                None, f"port {port} on {host} is in use (another server?); choose one with --port"
            ) from None
        raise BadInputError(None, f"cannot listen on {host}:{port}: {error.strerror}") from None
    sock.listen(backlog)
    return sock
