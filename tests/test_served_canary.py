"""A served run that really executes carries nothing from outside the registered corpora.

``research serve`` runs as a subprocess on a private redis-server with the ``thread`` job
backend, so the run it accepts is researched in the server process, over real HTTP.
``RESEARCH_CORPUS_ROOTS`` is the folder of the shared test corpus (``tiny.jsonl``); a canary file
sits in a folder outside it. The same token is refused for that folder, a ``..`` path into it,
a symlink to it and a folder in the root that holds a symlink to the canary file (403
``corpus_not_registered``); then it starts a run on the registered corpus, follows its events to
the end and downloads its report and the whole run (zip: report, sources, artifacts). The canary
is in none of them, in no error body, no Redis value and no file of the data dir.

Refusal over MCP and the other ways of naming the folder: ``tests/test_api_access.py``."""

from __future__ import annotations

import io
import json
import zipfile

import httpx
import pytest
from test_api_access import _files_text, _redis_text

pytestmark = pytest.mark.timeout(600)
CANARY = "CANARY-7d2e91aa-database-password-hunter2"
TOPIC = "Trastuzumab in HER2-positive breast cancer"
SMALL = {"max_perspectives": 2, "max_turns": 2, "gap_turns": 0}


def _events(api, run_id: str, headers: dict[str, str]) -> tuple[str, dict]:
    """The run's server-sent events, followed until the server ends the stream after ``end``
    (at most 300 s between two lines): ``(the stream's raw text, the end event's data)``."""
    with api.client.stream(
        "GET", f"/runs/{run_id}/events", headers=headers, timeout=httpx.Timeout(300)
    ) as resp:
        assert resp.status_code == 200, resp.read()
        lines = list(resp.iter_lines())
    end = lines.index("event: end")
    data = next(ln for ln in lines[end:] if ln.startswith("data:"))
    return "\n".join(lines), json.loads(data.removeprefix("data:"))


def _zip_text(content: bytes) -> str:
    """Every member of a zip archive, decoded as UTF-8 (bytes that are not are replaced)."""
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        return "\n".join(
            archive.read(name).decode("utf-8", errors="replace") for name in archive.namelist()
        )


def test_a_served_run_executes_without_the_canary_anywhere(
    serve_api, finished_corpus, tmp_path_factory
):
    root = finished_corpus.parent
    outside = tmp_path_factory.mktemp("canary_outside") / "secret"
    outside.mkdir()
    (outside / "passwords.md").write_text(f"# Passwords\n\nThe database password is {CANARY}.\n")
    linked = tmp_path_factory.mktemp("canary_root") / "root"
    (linked / "mixed").mkdir(parents=True)
    (linked / "mixed" / "passwords.md").symlink_to(outside / "passwords.md")
    (linked / "secret").symlink_to(outside, target_is_directory=True)
    api = serve_api(
        "canary_run",
        RESEARCH_JOB_BACKEND="thread",
        RESEARCH_API_RATE_PER_MIN="0",
        RESEARCH_CORPUS_ROOTS=f"{root}:{linked}",
        RESEARCH_CORPUS=str(finished_corpus),
        RESEARCH_PREINDEX="0",
    )
    auth = api.auth("canary-runner", "run")
    answers: list[str] = []
    for corpus in (str(outside), f"{root}/../{outside.parent.name}/secret", "secret", "mixed"):
        resp = api.client.post(
            "/runs", json={"topic": "database password", "corpus": corpus}, headers=auth
        )
        answers.append(resp.text)
        assert resp.status_code == 403 and resp.json()["code"] == "corpus_not_registered", (
            corpus,
            resp.text,
        )
    assert api.client.get("/runs", headers=auth).json() == []  # nothing was created

    started = api.client.post(
        "/runs", json={"topic": TOPIC, "corpus": finished_corpus.name, **SMALL}, headers=auth
    )
    assert started.status_code == 201, started.text
    run_id = started.json()["run_id"]
    events, end = _events(api, run_id, auth)
    assert end["status"] == "complete", end
    run = api.client.get(f"/runs/{run_id}", headers=auth)
    assert run.json()["run"]["config"]["corpus"] == str(finished_corpus.resolve())
    report = api.client.get(f"/runs/{run_id}/report", params={"format": "md"}, headers=auth)
    whole = api.client.get(f"/runs/{run_id}/report", params={"format": "zip"}, headers=auth)
    assert report.status_code == 200 and "Trastuzumab" in report.text
    assert whole.status_code == 200
    archive = _zip_text(whole.content)
    assert "artifacts/" in json.dumps(zipfile.ZipFile(io.BytesIO(whole.content)).namelist())
    answers += [events, run.text, report.text, archive, (api.data / "serve.log").read_text()]
    assert not [a[:200] for a in answers if CANARY in a]
    assert CANARY not in _redis_text(api.env["REDIS_URL"])
    assert CANARY not in _files_text(api.data)  # runs, artifacts, indexes, logs
