"""livemon.profiler: labelled CPU ranges and a scheduled profiler, with torch.profiler's names.

    from livemon import profiler

    with profiler.profile(schedule=profiler.schedule(wait=5, warmup=1, active=3, repeat=2),
                          on_trace_ready=profiler.chrome_trace_handler("traces")) as prof:
        for batch in loader:
            with profiler.record_function("forward"):
                loss = model(batch)
            prof.step()

The files open in ui.perfetto.dev and chrome://tracing. While a profile runs (or after
``set_range_stats_enabled(True)``), every range's duration also goes to a livemon Stat named
``range/<name>`` (count, mean, p50, p99, max, in milliseconds), which the dashboard shows live.

Unlike torch.profiler this records only the ranges you label (no operator or CUDA events), and
a range costs nanoseconds instead of microseconds.
"""

import contextlib

from ._livemon import (  # noqa: F401  (the public API)
    ProfilerAction,
    Trace,
    _Profiler,
    _Range,
    _Schedule,
    flush_range_stats,
    range_stats_enabled,
    set_range_stats_enabled,
    set_thread_name,
)

__all__ = [
    "ProfilerAction", "Trace", "schedule", "profile", "record_function", "chrome_trace_handler",
    "tensorboard_trace_handler", "set_range_stats_enabled", "range_stats_enabled", "flush_range_stats",
    "set_thread_name",
]


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """torch.profiler.schedule: skip ``skip_first`` steps, then cycles of ``wait`` idle steps,
    ``warmup`` steps and ``active`` recorded steps (the last one RECORD_AND_SAVE), ``repeat``
    times (0: without end). Returns a callable step -> ProfilerAction. Bad arguments raise
    ValueError naming the argument."""
    return _Schedule(wait=wait, warmup=warmup, active=active, repeat=repeat, skip_first=skip_first)


class record_function(contextlib.ContextDecorator):
    """A labelled range: ``with record_function("forward"): ...`` or ``@record_function("load")``.
    Costs next to nothing while no profile runs and range stats are off."""

    def __init__(self, name):
        self.name = str(name)
        self._range = _Range(self.name)

    def __enter__(self):
        self._range.open()
        return self

    def __exit__(self, *exc):
        self._range.close()
        return False

    def _recreate_cm(self):
        # A decorated function may run on several threads, or recursively: a range per call.
        return record_function(self.name)


class profile:
    """torch.profiler.profile for livemon's ranges: ``schedule`` (from ``schedule()``, or any
    callable step -> ProfilerAction; without one, everything from start to stop is recorded),
    ``on_trace_ready(prof)`` called when a RECORD_AND_SAVE step ends and when ``stop()`` ends a
    recording (``prof.trace()`` is then the trace), ``range_stats`` (time ranges into
    ``range/<name>`` Stats while running) and ``record_steps`` (a "ProfilerStep#<n>" range per
    step). Use it as a context manager, or call start() and stop(); call step() after each
    training step. One profile runs at a time: starting a second raises ValueError."""

    def __init__(self, *, schedule=None, on_trace_ready=None, range_stats=True, record_steps=True):
        self.on_trace_ready = on_trace_ready
        self._trace = None
        self._profiler = _Profiler(schedule, self._trace_ready, range_stats, record_steps)

    def _trace_ready(self, trace):
        self._trace = trace
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        self._profiler.start()

    def stop(self):
        self._profiler.stop()

    def step(self):
        """Ends the current step; may call on_trace_ready."""
        self._profiler.step()

    @property
    def step_num(self):
        return self._profiler.step_num

    @property
    def current_action(self):
        return self._profiler.current_action

    def trace(self):
        """The last trace handed over (a Trace), or None."""
        return self._trace

    def export_chrome_trace(self, path):
        """Writes the last trace as Chrome trace-event JSON to ``path``."""
        if self._trace is None:
            raise RuntimeError("no trace has been recorded yet")
        self._trace.save(path)


def chrome_trace_handler(dir_name, worker_name=None):
    """An on_trace_ready handler writing each trace to ``dir_name`` (created if missing) as
    ``<worker_name>.<step>.<ms>.pt.trace.json``; ``worker_name`` defaults to "<host>_<pid>", as
    torch.profiler.tensorboard_trace_handler's."""

    def handler(prof):
        prof.trace().save_to_dir(dir_name, worker_name or "")

    return handler


# torch.profiler's name for the same handler.
tensorboard_trace_handler = chrome_trace_handler
