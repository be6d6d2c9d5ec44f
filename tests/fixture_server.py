"""A loopback HTTP server (stdlib ``http.server`` on 127.0.0.1, random port) replaying the real
recorded API payloads of ``shared/data/api_fixtures`` for each search backend, with switchable
failure modes (HTTP 500, 429 with Retry-After, a hang longer than the client timeout, an error
body). Tests point backends at it through ``RESEARCH_<BACKEND>_URL``."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import yaml
from lxml import etree

FIXTURES = (
    Path(
        os.environ.get("RESEARCH_SHARED_DATA")
        or Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    / "api_fixtures"
)


def _read(rel: str) -> bytes:
    return (FIXTURES / rel).read_bytes()


def _wiki(rel: str) -> bytes:
    return json.dumps(
        json.loads(_read(f"wikipedia/pymediawiki_tests_2017/individual/{rel}"))["response"]
    ).encode()


def _ct_studies() -> bytes:
    studies = [
        json.loads(p.read_text())
        for p in sorted((FIXTURES / "clinicaltrials_gov/v2_study").glob("*.json"))
    ]
    return json.dumps({"studies": studies}).encode()  # v2 /studies envelope around the real records


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 3}


def _pubmed_pool() -> dict[str, bytes]:
    """PMID → raw ``<PubmedArticle>`` element bytes from every recorded efetch body."""

    bodies = [
        p.read_bytes()
        for p in sorted((FIXTURES / "pubmed/biopython_Tests_Entrez").glob("pubmed*.xml"))
    ]
    for p in sorted((FIXTURES / "pubmed/biocommons_eutils_cassettes").glob("*.yaml")):
        for it in yaml.safe_load(p.read_text())["interactions"]:
            body = it["response"]["body"]["string"]
            if "<PubmedArticleSet" in body:
                bodies.append(body.encode())
    pool = {}
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    for body in bodies:
        for art in etree.fromstring(body, parser).findall("PubmedArticle"):
            pool[art.findtext("MedlineCitation/PMID").strip()] = etree.tostring(art)
    return pool


def _rank(term: str, docs: dict[str, bytes]) -> list[str]:
    """Keys of ``docs`` sharing a word (> 3 letters) with ``term``, most shared words first —
    a stand-in for the service's own search over the recorded records."""
    q = _words(term)
    scored = [(len(q & _words(body.decode("utf-8", "replace"))), key) for key, body in docs.items()]
    return [key for n, key in sorted(scored, key=lambda x: -x[0]) if n > 0]


class FixtureServer:
    """Replays fixtures; ``modes[backend]`` is ``ok`` (default), ``500``, ``429``, ``hang``,
    ``error_body``. ``hits[backend]`` counts requests. ``pages`` maps extra paths to HTML."""

    def __init__(self) -> None:
        self.modes: dict[str, str] = {}
        self.hits: dict[str, int] = {}
        self.pages: dict[str, tuple[int, dict, bytes]] = {}
        self.hang_s = 3.0
        self.pubmed = _pubmed_pool()
        self.studies = {
            p.stem: p.read_bytes()
            for p in sorted((FIXTURES / "clinicaltrials_gov/v2_study").glob("*.json"))
        }
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                server._handle(self)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                server._handle(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def url(self, backend: str) -> str:
        """Base URL to put in ``RESEARCH_<BACKEND>_URL``."""
        return f"{self.base}/{backend}" + ("/w/api.php" if backend == "wikipedia" else "")

    # ------------------------------------------------------------ routing
    def _route(self, backend: str, path: str, q: dict) -> tuple[int, str, bytes]:
        if backend == "pubmed":
            if path.endswith("esearch.fcgi"):
                term = q.get("term", [""])[0]
                if "abcxyz" in term.lower():  # the recorded no-hits body with its ErrorList
                    return 200, "text/xml", _read("pubmed/biopython_Tests_Entrez/esearch8.xml")
                if term == "biopython":
                    return 200, "text/xml", _read("pubmed/biopython_Tests_Entrez/esearch1.xml")
                ids = _rank(term, self.pubmed)[: int(q.get("retmax", ["20"])[0])]
                body = (
                    f"<eSearchResult><Count>{len(ids)}</Count><RetMax>{len(ids)}</RetMax><RetStart>0</RetStart>"
                    f"<IdList>{''.join(f'<Id>{i}</Id>' for i in ids)}</IdList></eSearchResult>"
                )
                return 200, "text/xml", body.encode()
            if path.endswith("efetch.fcgi"):
                ids = [i for i in q.get("id", [""])[0].split(",") if i]
                if ids and all(i in self.pubmed for i in ids):
                    return (
                        200,
                        "text/xml",
                        b"<PubmedArticleSet>"
                        + b"".join(self.pubmed[i] for i in ids)
                        + b"</PubmedArticleSet>",
                    )
                return 200, "text/xml", _read("pubmed/biopython_Tests_Entrez/pubmed2.xml")
        if backend == "clinicaltrials" and path.endswith("/studies"):
            term = q.get("query.term", [""])[0]
            ranked = _rank(term, self.studies)
            if not ranked:
                return 200, "application/json", _ct_studies()
            return (
                200,
                "application/json",
                json.dumps({"studies": [json.loads(self.studies[k]) for k in ranked]}).encode(),
            )
        if backend == "wikipedia":
            if q.get("list") == ["search"]:
                return 200, "application/json", _wiki("list_search__chess_set__0.json")
            if q.get("prop") == ["extracts"]:
                return 200, "application/json", _wiki("prop_extracts__Chess__0.json")
        if backend == "brave":
            body = json.loads(_read("brave/web_search_example_statefarm.json"))["response"]
            return 200, "application/json", json.dumps(body).encode()
        if backend == "tavily":
            body = json.loads(_read("tavily/extracted/test_basic_search__0.json"))["response"][
                "body"
            ]
            return 200, "application/json", json.dumps(body).encode()
        if backend == "serper":
            return (
                200,
                "application/json",
                _read("serper/langchain_docs_google_serper_ipynb/search_apple_inc.json"),
            )
        return 404, "text/plain", b"not found"

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        if parts.path in self.pages:
            status, headers, body = self.pages[parts.path]
            h.send_response(status)
            for k, v in headers.items():
                h.send_header(k, v)
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)
            return
        backend = parts.path.strip("/").split("/")[0]
        self.hits[backend] = self.hits.get(backend, 0) + 1
        mode = self.modes.get(backend, "ok")
        if mode == "hang":
            time.sleep(self.hang_s)
        if mode in ("500", "hang"):
            status, ctype, body = (
                500,
                "text/html",
                b"<html><body>Internal Server Error</body></html>",
            )
        elif mode == "429":
            status, ctype, body = (
                429,
                "application/json",
                json.dumps({"error": {"code": 429, "message": "Provider returned error"}}).encode(),
            )
        elif mode == "error_body" and backend == "wikipedia":
            status, ctype, body = (
                200,
                "application/json",
                _wiki("geosearch__9999999999_999_0_0__0.json"),
            )
        else:
            status, ctype, body = self._route(backend, parts.path, parse_qs(parts.query))
        try:
            h.send_response(status)
            h.send_header("Content-Type", ctype)
            if status == 429:
                h.send_header("Retry-After", "0")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client timed out first
            pass
