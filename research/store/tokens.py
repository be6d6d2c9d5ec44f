"""Bearer tokens of the HTTP API (``research.api``), kept in Redis by their SHA-256 digest only.

A token is shown once, when it is created (``research token create NAME``); Redis holds its
name, the hex SHA-256 digest of the token and the creation time (``keys.API_TOKENS``), a digest →
name index for the lookup of each request (``keys.API_TOKEN_DIGESTS``) and the time of its last
use (``keys.API_TOKEN_USED``). Nothing that would let anyone rebuild a token is stored: a lost
token is revoked and a new one created.

Each token has a **scope** (``SCOPES``, each allowing what the ones before it allow): ``read``
lists, shows and downloads; ``run`` also starts runs and asks, approves and cancels the runs it
started (the run → token name of each run a token started is kept in ``keys.API_RUN_OWNERS``);
``admin`` acts on every run, deletes runs and manages corpora. A token stored without a scope
(created before scopes existed) has ``DEFAULT_SCOPE``, ``run``: it keeps starting and following
its runs, and deleting runs needs an ``admin`` token.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from dataclasses import dataclass
from typing import cast

import redis

from research.errors import InputError
from research.store import keys
from research.store.connection import TextRedis

SCOPES = ("read", "run", "admin")  # each allows everything the ones before it allow
DEFAULT_SCOPE = "run"
TOKEN_PREFIX = "rdk_"  # recognisable in a secret scanner's rules, and in a pasted header
_TOKEN_BYTES = 32  # 256 random bits


@dataclass(frozen=True)
class TokenInfo:
    """One API token as stored (never the token itself).

    Attributes:
        name: the token's name (``keys.check_token_name``).
        created_at: Unix seconds.
        last_used_at: Unix seconds of the last authenticated request, or None (never used).
        scope: ``read``, ``run`` or ``admin`` (``SCOPES``).
    """

    name: str
    created_at: float
    last_used_at: float | None
    scope: str = DEFAULT_SCOPE

    def public(self) -> dict[str, object]:
        """``{name, scope, created_at, last_used_at}`` for ``research token list --json``."""
        return {
            "name": self.name,
            "scope": self.scope,
            "created_at": self.created_at,
            "last_used_at": self.last_used_at,
        }


def check_scope(scope: str) -> str:
    """``scope`` when it is one of ``SCOPES``.

    Raises:
        InputError: (code ``invalid_scope``) any other value; the message lists the scopes.
    """
    if scope not in SCOPES:
        raise InputError(
            f"'{str(scope)[:40]}' is not a token scope: use read (list, show, download), run "
            "(also start, ask, approve and cancel its own runs) or admin (also delete runs and "
            "manage corpora).",
            code="invalid_scope",
        )
    return scope


def allows(scope: str, needed: str) -> bool:
    """True when a token of ``scope`` may do what needs ``needed`` (``SCOPES`` order)."""
    return SCOPES.index(scope) >= SCOPES.index(needed)


def digest(token: str) -> str:
    """The hex SHA-256 digest of ``token`` (UTF-8), the only form in which a token is stored."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenStore:
    """Create, revoke, list and verify API tokens on one Redis.

    Args:
        r: a ``redis.Redis`` with ``decode_responses=True`` (``RunStore.r``).
    """

    def __init__(self, r: redis.Redis) -> None:
        self.r: TextRedis = r

    def create(self, name: str, scope: str = DEFAULT_SCOPE) -> tuple[TokenInfo, str]:
        """Make a new random token called ``name`` with ``scope``; returns ``(info, token)``.
        The token is returned here once and only its digest is stored.

        Raises:
            InputError: ``name`` is not a valid token name (code ``invalid_token_name``), the
                scope is unknown (``invalid_scope``) or a token of that name exists (code
                ``token_exists``: revoke it first).
        """
        keys.check_token_name(name)
        check_scope(scope)
        token = TOKEN_PREFIX + secrets.token_urlsafe(_TOKEN_BYTES)
        info = TokenInfo(name=name, created_at=time.time(), last_used_at=None, scope=scope)
        record = json.dumps(
            {"name": name, "digest": digest(token), "created_at": info.created_at, "scope": scope}
        )
        if not self.r.hsetnx(keys.API_TOKENS, name, record):
            raise InputError(
                f"A token named '{name}' exists already; revoke it first "
                f"(research token revoke {name}) or choose another name.",
                code="token_exists",
            )
        pipe = self.r.pipeline()
        pipe.hset(keys.API_TOKEN_DIGESTS, digest(token), name)
        pipe.hdel(keys.API_TOKEN_USED, name)  # a use recorded while an older namesake was revoked
        pipe.execute()
        return info, token

    def revoke(self, name: str) -> None:
        """Delete the token ``name``: requests with it are refused from now on.

        Raises:
            InputError: invalid name, or no token of that name (code ``no_such_token``).
        """
        keys.check_token_name(name)
        raw = self.r.hget(keys.API_TOKENS, name)
        if raw is None:
            raise InputError(
                f"No API token named '{name}'; `research token list` shows them.",
                code="no_such_token",
            )
        pipe = self.r.pipeline()
        pipe.hdel(keys.API_TOKEN_DIGESTS, json.loads(raw)["digest"])
        pipe.hdel(keys.API_TOKENS, name)
        pipe.hdel(keys.API_TOKEN_USED, name)
        pipe.execute()

    def list(self) -> list[TokenInfo]:
        """Every token, oldest first."""
        records = cast(dict[str, str], self.r.hgetall(keys.API_TOKENS))
        used = cast(dict[str, str], self.r.hgetall(keys.API_TOKEN_USED))
        out = []
        for name, raw in records.items():
            rec = json.loads(raw)
            last = used.get(name)
            out.append(
                TokenInfo(
                    name=name,
                    created_at=float(rec["created_at"]),
                    last_used_at=float(last) if last is not None else None,
                    scope=_scope(rec),
                )
            )
        return sorted(out, key=lambda t: (t.created_at, t.name))

    def verify(self, token: str) -> str | None:
        """The name of the live token ``token``, recording its use now; None when no such token
        exists (never created, or revoked). One digest lookup: the time it takes does not depend
        on how much of a guessed token is right."""
        if not token:
            return None
        name = cast(str | None, self.r.hget(keys.API_TOKEN_DIGESTS, digest(token)))
        if name is None:
            return None
        self.r.hset(keys.API_TOKEN_USED, name, repr(time.time()))
        return name

    def scope(self, name: str) -> str | None:
        """The scope of token ``name`` (``DEFAULT_SCOPE`` for a token stored without one), or
        None when there is no such token."""
        raw = cast(str | None, self.r.hget(keys.API_TOKENS, name))
        return None if raw is None else _scope(json.loads(raw))

    def set_owner(self, run_id: str, name: str) -> None:
        """Record that token ``name`` started run ``run_id``."""
        self.r.hset(keys.API_RUN_OWNERS, run_id, name)

    def owner(self, run_id: str) -> str | None:
        """The name of the token that started ``run_id``, or None (started elsewhere)."""
        return cast(str | None, self.r.hget(keys.API_RUN_OWNERS, run_id))

    def forget_run(self, run_id: str) -> None:
        """Drop the owner record of a deleted run."""
        self.r.hdel(keys.API_RUN_OWNERS, run_id)


def _scope(record: dict[str, object]) -> str:
    scope = record.get("scope")
    return scope if isinstance(scope, str) and scope in SCOPES else DEFAULT_SCOPE
