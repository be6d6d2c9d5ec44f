"""A batch's reports as one zip.

Layout inside ``{batch name}.zip``::

    README.txt        what each file is, and which runs have no report (yet)
    batch.csv         one row per run: n, topic, run_id, status, sources, citations, file
    NN_<topic>.md     the report of run NN (batch order), as ``research export --format md``
                      writes it: the current version, its dating line, the follow-ups appendix
"""

from __future__ import annotations

import csv
import io
import zipfile
from collections.abc import Sequence
from typing import Any

from research.errors import InputError, RunNotFoundError
from research.export import render_export, safe_filename
from research.store.runs import RunStore

CSV_FIELDS = ["n", "topic", "run_id", "status", "sources", "citations", "file"]
README = __doc__.split("Layout inside", 1)[1]


def reports_zip(store: RunStore, name: str, runs: Sequence[dict[str, Any]]) -> tuple[bytes, int]:
    """``(zip bytes, number of reports)`` for ``runs`` (rows with ``run_id``, ``topic``,
    ``status``, ``sources``, ``citations``; in batch order). A run without a report is listed in
    ``batch.csv`` with an empty ``file`` and named in the README; the zip is built anyway."""
    buf = io.BytesIO()
    table = io.StringIO()
    writer = csv.DictWriter(table, fieldnames=CSV_FIELDS, extrasaction="ignore")
    writer.writeheader()
    missing: list[str] = []
    count = 0
    width = max(2, len(str(len(runs))))
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for n, row in enumerate(runs, start=1):
            file = ""
            try:
                data = render_export(store, row["run_id"], "md")
            except (InputError, RunNotFoundError):  # no report yet, or the run was deleted
                missing.append(f"{n:0{width}d} {row['run_id']} ({row['status']}): {row['topic']}")
            else:
                file = f"{n:0{width}d}_{safe_filename(row['topic'] or row['run_id'], 'md')}"
                z.writestr(file, data)
                count += 1
            writer.writerow({**row, "n": n, "file": file})
        z.writestr("batch.csv", table.getvalue())
        note = (
            "\nRuns without a report:\n" + "\n".join(f"  {m}" for m in missing) + "\n"
            if missing
            else ""
        )
        z.writestr("README.txt", f"Research Desk batch: {name}\n\nLayout inside" + README + note)
    return buf.getvalue(), count
