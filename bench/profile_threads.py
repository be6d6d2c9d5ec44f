"""``python -m bench.profile_threads OUT.prof -m MODULE ARGS…``: cProfile a whole process, every
thread (``cProfile`` alone sees only the thread that enabled it).

Each thread started after this module gets its own ``cProfile.Profile`` (installed through
``threading.setprofile``: the first profile event of a new thread enables a profiler for it);
at exit every profiler is stopped and their stats are merged (``pstats.Stats.add``) into
``OUT.prof``, and the top functions by cumulative and by own time are printed to stderr.
Deterministic profiling slows Python code ~1.5–2× (C calls are not slowed): read the shares,
not the seconds.
"""

from __future__ import annotations

import atexit
import cProfile
import io
import pstats
import runpy
import sys
import threading

_PROFILES: list[cProfile.Profile] = []
_LOCK = threading.Lock()


def _start_thread_profile(*_args) -> None:
    prof = cProfile.Profile()
    with _LOCK:
        _PROFILES.append(prof)
    prof.enable()  # replaces this hook for the thread


def _dump(out: str, top: int = 35) -> None:
    with _LOCK:
        profs = list(_PROFILES)
    for p in profs:
        try:
            p.disable()
        except Exception:  # noqa: BLE001,S110 - a profiler of another thread may refuse
            pass
    stats = pstats.Stats(profs[0])
    for p in profs[1:]:
        try:
            stats.add(p)
        except TypeError:  # a thread that recorded nothing
            pass
    stats.dump_stats(out)
    buf = io.StringIO()
    s = pstats.Stats(out, stream=buf)
    s.sort_stats("cumulative").print_stats(top)
    s.sort_stats("tottime").print_stats(top)
    sys.stderr.write(buf.getvalue())


def main() -> None:
    """Entry point (module doc)."""
    out, flag, module, *rest = sys.argv[1:]
    if flag != "-m":
        raise SystemExit("usage: python -m bench.profile_threads OUT.prof -m MODULE ARGS…")
    main_prof = cProfile.Profile()
    _PROFILES.append(main_prof)
    threading.setprofile(_start_thread_profile)
    atexit.register(_dump, out)
    sys.argv = [module, *rest]
    main_prof.enable()
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
