"""``research serve`` as a subprocess for tests, over real HTTP on a free loopback port (tests/ is
on sys.path, as for ``private_runs``). The ``serve_api`` fixture of ``tests/conftest.py`` starts
it on a private data dir; :func:`serving` is the start, the wait for ``/health`` and the stop."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from resilience_helpers import REPO, research_cmd

START_TIMEOUT_S = 60  # s for ``research serve`` to answer /health (imports, Redis, the app)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 at the time of the call."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def own_redis_env(data: Path, **extra: str) -> dict[str, str]:
    """Environment for a ``research`` subprocess on ``data`` with no ``REDIS_URL``: the command
    starts (or joins) the embedded Redis of that data dir itself. No model is configured."""
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "RESEARCH_LLM_MODEL")}
    env.update(
        RESEARCH_DATA_DIR=str(data),
        PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        TOKENIZERS_PARALLELISM="false",
        **extra,
    )
    return env


class ServedApi:
    """A running ``research serve``.

    Attributes: ``base`` (its URL), ``client`` (an ``httpx.Client`` on ``base``, 60 s timeout),
    ``env`` (the subprocess environment: ``research`` commands run with it reach the same data
    dir and Redis), ``data`` (the data dir; the server's output is ``data/serve.log``),
    ``redis_url`` (None when the command runs its own embedded Redis) and ``proc``.
    """

    def __init__(
        self, base: str, env: dict[str, str], data: Path, redis_url: str | None, proc
    ) -> None:
        self.base, self.env, self.data, self.redis_url, self.proc = (
            base,
            env,
            data,
            redis_url,
            proc,
        )
        self.client = httpx.Client(base_url=base, timeout=60)

    def cli(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        """``research ARGS`` on the served data dir and Redis."""
        return subprocess.run(
            research_cmd(*args), env=self.env, capture_output=True, text=True, timeout=timeout
        )

    def token(self, name: str, scope: str | None = None) -> str:
        """A new token made by ``research token create NAME [--scope SCOPE] --json``."""
        out = self.cli("token", "create", name, *(["--scope", scope] if scope else []), "--json")
        assert out.returncode == 0, out.stderr
        made = json.loads(out.stdout)
        assert made["name"] == name and made["token"].startswith("rdk_")
        assert scope is None or made["scope"] == scope
        return made["token"]

    def auth(self, name: str, scope: str | None = None) -> dict[str, str]:
        """Headers with a new token (:meth:`token`)."""
        return {"Authorization": f"Bearer {self.token(name, scope)}"}

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 90) -> int:
        """Send ``sig`` (SIGTERM, as ``make run`` stops it) and wait; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout=timeout)


@contextmanager
def serving(env: dict[str, str], data: Path, redis_url: str | None) -> Iterator[ServedApi]:
    """Start ``research serve --no-resume`` with ``env`` on a free port, wait until ``/health``
    answers 200 (at most :data:`START_TIMEOUT_S`; a server that exits first fails with its log)
    and yield it; on exit it is terminated (killed after 30 s) unless it stopped already."""
    port = free_port()
    data.mkdir(parents=True, exist_ok=True)
    log = (data / "serve.log").open("w")
    proc = subprocess.Popen(
        research_cmd("serve", "--port", str(port), "--no-resume"),
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None, (data / "serve.log").read_text()
            assert time.monotonic() < deadline, "research serve did not answer within 60 s"
            time.sleep(0.2)
        served = ServedApi(base, env, data, redis_url, proc)
        yield served
        served.client.close()
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=30)
        log.close()
