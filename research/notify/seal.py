"""Encrypt a run's own notification targets for Redis, so no token or password in them is
stored in clear.

Why: the process that delivers a run's notifications is the one that ends the run — a thread
of the dashboard, the CLI, or an RQ worker on another machine — so the targets must travel
with the run through the shared Redis. They travel as one Fernet token (AES-128-CBC +
HMAC-SHA256, ``cryptography``); the key never enters Redis:

- ``RESEARCH_NOTIFY_KEY`` when set (any string; the Fernet key is its SHA-256), so every
  worker given the same environment can open them;
- else a random key in ``{data_dir}/.notify-key`` (created once, mode 0600). RQ workers
  already share the data dir (reports and artifacts are files), so they share this key too.

A Redis dump, ``research show --json`` or an export therefore holds only ciphertext and the
redacted display forms (``RunConfig.notify``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from research.config import Settings
from research.errors import ResearchError

KEY_FILE = ".notify-key"


def _key_file(settings: Settings) -> bytes:
    """The data dir's key, created on first use (exclusive create: two processes racing
    agree on the one that won)."""
    path = Path(settings.data_dir) / KEY_FILE
    try:
        return path.read_bytes().strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    key = Fernet.generate_key()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes().strip()
    with os.fdopen(fd, "wb") as fh:
        fh.write(key)
    return key


def _fernet(settings: Settings) -> Fernet:
    if settings.notify_key is not None:
        digest = hashlib.sha256(settings.notify_key.get_secret_value().encode("utf-8")).digest()
        return Fernet(base64.urlsafe_b64encode(digest))
    return Fernet(_key_file(settings))


def seal(urls: list[str], settings: Settings) -> str:
    """``urls`` as one encrypted token (str) for Redis.

    Raises:
        ResearchError (code ``notify_key``): the data dir's key file cannot be created or read.
    """
    try:
        return _fernet(settings).encrypt(json.dumps(urls).encode("utf-8")).decode("ascii")
    except (OSError, ValueError) as exc:
        raise ResearchError(
            f"Cannot keep this run's notification targets: the key file in the data dir is not "
            f"usable ({type(exc).__name__}); set RESEARCH_NOTIFY_KEY or fix {settings.data_dir}.",
            code="notify_key",
        ) from None


def unseal(token: str, settings: Settings) -> list[str]:
    """The URLs in a token made by ``seal``.

    Raises:
        ResearchError (code ``notify_key``): the token does not open with this process's key
            (``RESEARCH_NOTIFY_KEY`` or the data dir differs from the one that sealed it).
    """
    try:
        urls = json.loads(_fernet(settings).decrypt(token.encode("ascii")))
    except (InvalidToken, OSError, ValueError):
        raise ResearchError(
            "The run's notification targets cannot be decrypted here: this process's "
            "RESEARCH_NOTIFY_KEY (or data dir key file) is not the one that stored them.",
            code="notify_key",
        ) from None
    return [str(u) for u in urls] if isinstance(urls, list) else []
