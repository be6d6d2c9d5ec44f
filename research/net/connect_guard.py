"""The outbound-URL guard for libraries that send through ``requests``/urllib3 (Apprise).

Apprise's plugins build their own ``requests`` calls, so no client of ours sits in between. What
every one of those calls shares is urllib3 opening a connection with
``urllib3.util.connection.create_connection((host, port), …)`` — once per connection, so once per
redirect hop too. :func:`guarded_connections` makes that function, **for the calling thread
only** and for the duration of the block, check the host (``research.net.guard.check_host``:
every address public or allow-listed) and connect to the address it checked (the TLS server name
and ``Host`` header stay the host's name, as urllib3 sets them apart from the address it
connects to). Other threads, and this thread outside the block, connect as before.

A refused connection raises :class:`research.net.guard.BlockedURL` out of the library call.
Connections a library makes without urllib3 (Apprise's e-mail through ``smtplib``) are not seen
here; their host is checked before delivery (``research.notify.apprise_target``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from urllib3.util import connection

from research.net.guard import AllowList, allow_list, check_host

_local = threading.local()
_install_lock = threading.Lock()
_original: Callable[..., Any] = connection.create_connection
_installed = False


def _create_connection(address: tuple[str, int], *args: Any, **kwargs: Any) -> Any:
    """urllib3's ``create_connection``, checked and pinned while this thread is guarded."""
    allow: AllowList | None = getattr(_local, "allow", None)
    if allow is None:
        return _original(address, *args, **kwargs)
    host, port = address
    checked = check_host(str(host), int(port), allow)
    return _original((checked.address, port), *args, **kwargs)


def _install() -> None:
    """Put :func:`_create_connection` in urllib3's place once per process."""
    global _installed
    with _install_lock:
        if not _installed:
            connection.create_connection = _create_connection
            _installed = True


@contextmanager
def guarded_connections(allow: AllowList | None = None) -> Iterator[None]:
    """Within the block, every urllib3 connection this thread opens goes through the guard.

    Args:
        allow: the allow-list (default: the settings' ``RESEARCH_OUTBOUND_ALLOW``).
    Raises (from the library calls inside the block):
        BlockedURL: a connection to an internal address was refused; nothing was sent on it.
    """
    _install()
    previous = getattr(_local, "allow", None)
    _local.allow = allow_list() if allow is None else allow
    try:
        yield
    finally:
        _local.allow = previous
