"""Comments on a run's report, in Redis: the one place that reads and writes
``run:{id}:comments`` (a hash id → Comment JSON, persisted with the run through the server's AOF).

A comment is on a section (or the lead), optionally on one quoted sentence of it; it has an
author and a time and can be resolved and reopened. Comments belong to the run, not to a
version: one made on version 2 is still shown on version 3 (``version`` records where it was made).
"""

from __future__ import annotations

import secrets
from typing import Literal

from pydantic import BaseModel, Field

from research.errors import InputError
from research.models import now
from research.store import keys
from research.store.runs import RunStore
from research.store.versions import clean_author

MAX_COMMENT_CHARS = 4_000
MAX_QUOTE_CHARS = 600
MAX_COMMENTS = 2_000  # per run: a runaway client cannot grow a run without bound


class Comment(BaseModel):
    """One comment. ``section``: the heading (``"Lead"`` for the lead); ``quote``: the sentence
    it is about ('' = the whole section); times in Unix s."""

    id: str
    section: str
    quote: str = ""
    text: str
    author: str
    created_at: float = Field(default_factory=now)
    version: int = Field(default=1, ge=1, description="report version it was made on")
    status: Literal["open", "resolved"] = "open"
    status_by: str = ""
    status_at: float | None = None


class CommentStore:
    """Typed access to a run's comments.

    Args:
        store: the ``RunStore`` (its Redis client is used; events go to the run's stream).
    """

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self.r = store.r

    def list(self, run_id: str) -> list[Comment]:
        """Every comment of the run, oldest first."""
        rows = self.r.hvals(keys.run_comments(run_id))
        return sorted((Comment.model_validate_json(x) for x in rows), key=lambda c: c.created_at)

    def get(self, run_id: str, comment_id: str) -> Comment:
        """The comment ``comment_id``. Raises InputError (code ``no_such_comment``)."""
        raw = self.r.hget(keys.run_comments(run_id), str(comment_id))
        if not raw:
            raise InputError(
                f"Run {run_id} has no comment '{str(comment_id)[:40]}'.", code="no_such_comment"
            )
        return Comment.model_validate_json(raw)

    def add(
        self,
        run_id: str,
        *,
        section: str,
        text: str,
        author: str | None,
        quote: str = "",
        version: int = 1,
    ) -> Comment:
        """Store a new open comment and emit ``comment.added``.

        Raises:
            InputError: empty text (``empty_comment``), text over 4,000 characters
                (``too_long``), no section, or the run already has 2,000 comments.
        """
        text = (text or "").strip()
        section = " ".join(str(section or "").split())
        if not text:
            raise InputError(
                "The comment is empty; write what should change.", code="empty_comment"
            )
        if len(text) > MAX_COMMENT_CHARS:
            raise InputError(
                f"The comment is {len(text):,} characters; at most {MAX_COMMENT_CHARS:,}.",
                code="too_long",
            )
        if not section:
            raise InputError("Say which section the comment is on.", code="unknown_section")
        self.store.get_run(run_id)  # RunNotFoundError for an unknown run
        if self.r.hlen(keys.run_comments(run_id)) >= MAX_COMMENTS:
            raise InputError(
                f"Run {run_id} already has {MAX_COMMENTS:,} comments; resolve or export them.",
                code="too_many_comments",
            )
        comment = Comment(
            id=secrets.token_hex(6),
            section=section[:200],
            quote=" ".join(str(quote or "").split())[:MAX_QUOTE_CHARS],
            text=text,
            author=clean_author(author),
            version=max(1, int(version)),
        )
        self.r.hset(keys.run_comments(run_id), comment.id, comment.model_dump_json())
        self.store.emit(
            run_id,
            "comment.added",
            {
                "id": comment.id,
                "author": comment.author,
                "section": comment.section,
                "version": comment.version,
            },
        )
        return comment

    def set_status(
        self, run_id: str, comment_id: str, *, resolved: bool, by: str | None
    ) -> Comment:
        """Resolve (``resolved=True``) or reopen a comment; emits ``comment.status``.

        Raises:
            InputError (code ``no_such_comment``): no such comment.
        """
        comment = self.get(run_id, comment_id)
        comment.status = "resolved" if resolved else "open"
        comment.status_by = clean_author(by)
        comment.status_at = now()
        self.r.hset(keys.run_comments(run_id), comment.id, comment.model_dump_json())
        self.store.emit(
            run_id,
            "comment.status",
            {"id": comment.id, "status": comment.status, "by": comment.status_by},
        )
        return comment

    def counts(self, run_id: str) -> dict[str, int]:
        """``{total, open, resolved}`` (``research show --json`` ``comments``)."""
        rows = self.list(run_id)
        resolved = sum(c.status == "resolved" for c in rows)
        return {"total": len(rows), "open": len(rows) - resolved, "resolved": resolved}

    def clear(self, run_id: str) -> None:
        """Remove every comment of the run (for tests that share one finished run)."""
        self.r.delete(keys.run_comments(run_id))
