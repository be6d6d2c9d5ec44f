"""Figures, timing helpers, the printed table and the JSON results file.

A ``Figure`` is one row of the table: a measured ``value``, the ``baseline`` measured in the same
run, ``ratio = value / baseline`` (or given), and a target on the ratio (or on the value when
``target_on == "value"``). Items that could not be measured carry ``status = "not measured"``
and a ``note`` saying why; they never carry invented numbers.
"""

from __future__ import annotations

import json
import os
import platform
import socket
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

RESULTS_DIR = Path(__file__).resolve().parent / "results"


@dataclass
class Figure:
    """One benchmark figure.

    Attributes:
        item: issue-8 item number (1..9). name: short id, e.g. ``collector.get_progress_10k_vs_10``.
        value / baseline: measured numbers in ``unit`` / ``baseline_unit`` (None when not measured).
        ratio: ``value / baseline`` unless given. target: e.g. ``"<= 1.5"`` or ``">= 0.9"`` or "".
        target_on: ``"ratio"`` or ``"value"``. status: ``pass`` / ``FAIL`` / ``info`` / ``not measured``.
    """

    item: int
    name: str
    value: float | None
    unit: str = ""
    baseline: float | None = None
    baseline_label: str = ""
    ratio: float | None = None
    target: str = ""
    target_on: str = "ratio"
    note: str = ""
    status: str = ""
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.ratio is None and self.value is not None and self.baseline not in (None, 0):
            self.ratio = self.value / self.baseline
        if not self.status:
            self.status = self.judge()

    def judge(self) -> str:
        """``pass``/``FAIL`` against ``target`` (``info`` without one, ``not measured`` w/o value)."""
        if self.value is None:
            return "not measured"
        if not self.target:
            return "info"
        x = self.ratio if self.target_on == "ratio" else self.value
        if x is None:
            return "not measured"
        op, num = self.target.split()
        bound = float(num)
        ok = {"<=": x <= bound, ">=": x >= bound, "<": x < bound, ">": x > bound, "==": x == bound}[
            op
        ]
        return "pass" if ok else "FAIL"


def not_measured(item: int, name: str, reason: str, target: str = "") -> Figure:
    """A row for an item that could not be measured, with the reason (no invented numbers)."""
    return Figure(
        item=item, name=name, value=None, target=target, note=reason, status="not measured"
    )


def percentile(samples: list[float], q: float) -> float:
    """The ``q``-th percentile (0..100) with linear interpolation (numpy's default)."""
    return float(np.percentile(np.asarray(samples, dtype=float), q)) if samples else float("nan")


def timed(fn, *args, **kwargs) -> tuple[float, object]:
    """``(seconds, result)`` of one call, by ``time.perf_counter``."""
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t0, out


def median(xs: list[float]) -> float:
    return float(statistics.median(xs)) if xs else float("nan")


def machine() -> dict:
    """Host facts stored with the results: hostname, cores, CPU model, Python, platform."""
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "host": socket.gethostname(),
        "cores": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "loadavg_1_5_15": [round(x, 2) for x in os.getloadavg()],
    }


def _fmt(x: float | None, unit: str = "") -> str:
    if x is None:
        return "—"
    if isinstance(x, float) and (x != x):
        return "nan"
    ax = abs(x)
    s = f"{x:.3g}" if ax < 1000 else f"{x:,.0f}"
    if ax >= 0.001 and ax < 1000:
        s = f"{x:.4g}"
    return f"{s} {unit}".strip()


def table(figures: list[Figure], title: str = "") -> str:
    """Markdown table: item, figure, value, baseline, ratio, target, status (+ notes below)."""
    rows = [
        "| # | figure | value | baseline | ratio | target | result |",
        "|---|---|---|---|---|---|---|",
    ]
    notes = []
    for f in figures:
        base = _fmt(f.baseline, f.extra.get("baseline_unit", f.unit))
        if f.baseline_label:
            base = f"{base} ({f.baseline_label})" if f.baseline is not None else f.baseline_label
        target = f"{f.target} ({f.target_on})" if f.target and f.target_on == "value" else f.target
        rows.append(
            f"| {f.item} | {f.name} | {_fmt(f.value, f.unit)} | {base} | {_fmt(f.ratio)} | "
            f"{target or '—'} | {f.status} |"
        )
        if f.note:
            notes.append(f"- {f.name}: {f.note}")
    out = ([title, ""] if title else []) + rows
    if notes:
        out += ["", "Notes:", *notes]
    return "\n".join(out)


def write_results(figures: list[Figure], meta: dict, out_dir: Path = RESULTS_DIR) -> Path:
    """Write ``<date>-<host>.json`` and ``latest.json`` under ``out_dir``; returns the dated path.

    JSON shape: ``{"date": ISO-8601 UTC, "machine": {...}, "meta": {...}, "figures": [Figure...]}``.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    now = datetime.now(UTC)
    info = machine()
    doc = {
        "date": now.isoformat(timespec="seconds"),
        "machine": info,
        "meta": meta,
        "figures": [asdict(f) for f in figures],
    }
    text = json.dumps(doc, indent=2, default=_json_default)
    path = out_dir / f"{now:%Y-%m-%dT%H%M%S}-{info['host']}.json"
    path.write_text(text)
    (out_dir / "latest.json").write_text(text)
    return path


def _json_default(x: object) -> object:
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    if isinstance(x, Path):
        return str(x)
    raise TypeError(f"not JSON-serialisable: {type(x).__name__}")


def file_name(topic: str) -> str:
    """FreshWiki's file name for a topic: ``' '``, ``'/'`` and ``':'`` become ``'_'``."""
    return topic.replace(" ", "_").replace("/", "_").replace(":", "_")


@contextmanager
def scoped_env(**values: str) -> Iterator[None]:
    """Set environment variables for the ``with`` block, then restore the previous values."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
