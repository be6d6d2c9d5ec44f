"""Ingestion timing: generate the "folder of 20 mixed documents" and time ``ingest``.

``python -m research.devtools.mixed_docs [--out DIR] [--corpus JSONL]`` writes 8 five-page PDFs
(fpdf2, ~2,800 characters per page), 4 DOCX (8 paragraphs of ~1,200 characters), 4 HTML pages
(~8,000 characters of article text plus navigation), 2 Markdown and 2 text files (~6,000
characters each) — about 300 kB, ~210 chunks — whose text is cut from real documents of a JSONL
corpus (default: ``settings.default_corpus``; synthetic sentences when it is absent), then
ingests the folder into a fresh corpus in a temporary data dir and prints one JSON line
``{"files", "chunks", "seconds" (s, ingest call incl. model load), "loadavg_1m"}``.

Measured (2 cores, load average ~5 from a concurrent test run): 20 files, 209 chunks, 19.2 s
(embedding ~12 s, model load ~3 s, extraction 0.3 s); re-ingest with nothing changed 0.01 s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from pathlib import Path

import docx
from fpdf import FPDF

from research.config import load_settings, set_env, set_library_default
from research.ingest import ingest


def _texts(corpus: Path | None, limit: int = 400) -> list[str]:
    out: list[str] = []
    if corpus and corpus.is_file() and corpus.suffix == ".jsonl":
        with corpus.open(encoding="utf-8") as fh:
            for line in fh:
                text = json.loads(line).get("text", "")
                if len(text) > 800:
                    out.append(text)
                if len(out) >= limit:
                    break
    return out or [
        " ".join(
            f"Sentence {i} of a synthetic trial report about dosing and safety." for i in range(40)
        )
    ]


def make_mixed_docs(
    folder: str | Path, corpus: str | Path | None = None, seed: int = 5
) -> list[Path]:
    """Write the 20 documents into ``folder`` (created); returns their paths.

    Raises:
        OSError: ``folder`` is not writable.
    """

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    texts, rnd = _texts(Path(corpus) if corpus else None), random.Random(seed)

    def para(n: int) -> str:
        s = ""
        while len(s) < n:
            s += rnd.choice(texts)[:1200] + "\n\n"
        return s[:n]

    paths: list[Path] = []
    for k in range(8):
        pdf = FPDF()
        for _ in range(5):
            pdf.add_page()
            pdf.set_font("Helvetica", size=10)
            pdf.multi_cell(0, 5, para(2800).encode("latin-1", "replace").decode("latin-1"))
        paths.append(out / f"report{k}.pdf")
        pdf.output(str(paths[-1]))
    for k in range(4):
        d = docx.Document()
        d.add_heading(f"Memo {k}", 0)
        for _ in range(8):
            d.add_paragraph(para(1200))
        paths.append(out / f"memo{k}.docx")
        d.save(str(paths[-1]))
    for k in range(4):
        body = "".join(f"<p>{p}</p>" for p in para(8000).split("\n\n") if p.strip())
        paths.append(out / f"page{k}.html")
        paths[-1].write_text(
            f"<html><head><title>Page {k}</title></head><body><nav>menu</nav><article>"
            f"<h1>Page {k}</h1>{body}</article></body></html>",
            encoding="utf-8",
        )
    for k in range(2):
        paths.append(out / f"notes{k}.md")
        paths[-1].write_text(f"# Notes {k}\n\n{para(6000)}", encoding="utf-8")
        paths.append(out / f"plain{k}.txt")
        paths[-1].write_text(para(6000), encoding="utf-8")
    return paths


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: generate, ingest into a temporary data dir, print the timing JSON."""
    ap = argparse.ArgumentParser(
        prog="python -m research.devtools.mixed_docs", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--out", help="folder for the documents (default: a temporary folder)")
    ap.add_argument(
        "--corpus", help="JSONL corpus to cut text from (default: settings.default_corpus)"
    )
    args = ap.parse_args(argv)

    for key, value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1")):
        set_library_default(key, value)

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.out) if args.out else Path(tmp) / "docs"
        make_mixed_docs(folder, args.corpus or load_settings().default_corpus)
        set_env("RESEARCH_DATA_DIR", str(Path(tmp) / "data"))

        t0 = time.monotonic()
        report = ingest("mixed-docs", [folder])
        print(
            json.dumps(
                {
                    "files": report.files,
                    "chunks": report.chunks,
                    "errors": len(report.errors),
                    "seconds": round(time.monotonic() - t0, 2),
                    "loadavg_1m": round(os.getloadavg()[0], 2),
                }
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
