"""The HTTP API against its own published contract: schemathesis (the ``st`` command, its every
check, positive and negative data, all four phases: examples, coverage, fuzzing, stateful) runs
against ``research serve`` on a private redis-server and reads ``/openapi.json``.

The server runs with the ``rq`` job backend and no worker, so every run the fuzzer starts is only
created and queued (no research is done: the suite can bear hundreds of them), and with
``RESEARCH_API_STREAM_MAX_S=1`` so that the event stream of a queued run ends after a second with
a ``reconnect`` event. Uploads into corpora are indexed for real; one upload before the run loads
the embedding model. Operation-level settings (the four operations whose input gate checks what
a schema cannot state) and the cache turned off (no state carried from one run to the next) are
in ``tests/contract/schemathesis.toml``. Examples per operation and
phase: ``MAX_EXAMPLES``; the number of cases that ran is printed and kept as a property of the
test (``record_property``)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from research.store import open_store

pytestmark = pytest.mark.timeout(900)
CONFIG = Path(__file__).parent / "contract" / "schemathesis.toml"
MAX_EXAMPLES = 5
SEED = 1


def test_schemathesis_all_checks_pass_on_every_operation(
    serve_api, finished_corpus, record_property, tmp_path
):
    api = serve_api(
        "contract",
        RESEARCH_JOB_BACKEND="rq",
        RESEARCH_API_RATE_PER_MIN="0",
        RESEARCH_API_STREAM_MAX_S="1",
        RESEARCH_CORPUS_ROOTS=str(finished_corpus.parent),
        RESEARCH_CORPUS=str(finished_corpus),
    )
    token = open_store().tokens.create("contract", "admin")[1]
    auth = {"Authorization": f"Bearer {token}"}
    warm = api.client.put(
        "/corpora/team/documents/her2.md",
        content=b"# HER2\n\nTrastuzumab targets HER2-positive breast cancer.\n",
        headers=auth,
        timeout=300,
    )
    assert warm.status_code == 201, warm.text
    st = Path(sys.executable).parent / "st"
    started = time.monotonic()
    out = subprocess.run(
        [
            str(st),
            "--config-file",
            str(CONFIG),
            "run",
            f"{api.base}/openapi.json",
            "--wait-for-schema",
            "30",
            "-H",
            f"Authorization: Bearer {token}",
            "--checks",
            "all",
            "--mode",
            "all",
            "--max-examples",
            str(MAX_EXAMPLES),
            "--phases",
            "examples,coverage,fuzzing,stateful",
            "--request-timeout",
            "60",
            "--generation-database",
            "none",
            "--seed",
            str(SEED),
            "--no-color",
        ],  # fmt: skip
        cwd=tmp_path,  # where schemathesis would keep its state: never the work tree
        capture_output=True,
        text=True,
        timeout=800,
    )
    took = time.monotonic() - started
    report = out.stdout + out.stderr
    assert out.returncode == 0, report[-6000:]
    cases = re.search(r"(\d+) generated, (\d+) passed", report)
    assert cases, report[-3000:]
    generated = int(cases.group(1))
    assert "Selected: 13/13" in report and "Tested: 13" in report, report[-3000:]
    assert generated >= 200, report[-3000:]  # every operation, both modes, every phase ran
    assert not (tmp_path / ".schemathesis").exists()  # its cache is off (schemathesis.toml)
    record_property("schemathesis_cases", generated)
    print(f"schemathesis: {generated} cases on 13 operations in {took:.0f} s")
