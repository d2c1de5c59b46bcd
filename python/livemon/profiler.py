"""livemon.profiler: labelled CPU ranges and a scheduled profiler, with torch.profiler 1.13's names.

Code written for torch.profiler runs with a changed import:

    from livemon import profiler       # was: import torch.profiler as profiler

    with profiler.profile(activities=[profiler.ProfilerActivity.CPU],
                          schedule=profiler.schedule(wait=5, warmup=1, active=3, repeat=2),
                          on_trace_ready=profiler.tensorboard_trace_handler("traces"),
                          record_shapes=True) as prof:
        for batch in loader:
            with profiler.record_function("forward"):
                loss = model(batch)
            prof.step()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))

The files open in ui.perfetto.dev and chrome://tracing. While a profile runs (or after
``set_range_stats_enabled(True)``), every range's duration also goes to a livemon Stat named
``range/<name>`` (count, mean, p50, p99, max, in milliseconds), which the dashboard shows live.

Unlike torch.profiler this records only the ranges you label (no operator or CUDA events), and
a range costs nanoseconds instead of microseconds. profile()'s arguments for what livemon does
not record (CUDA activity, record_shapes, profile_memory, with_stack, with_flops, with_modules,
experimental_config, use_cuda) are accepted and ignored.
"""

import contextlib
import enum
import gzip
import os

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
from ._key_averages import SORT_KEYS, KeyAverage, KeyAverages  # noqa: F401

__all__ = [
    "ProfilerAction", "ProfilerActivity", "DeviceType", "supported_activities", "kineto_available", "Trace",
    "KeyAverages", "KeyAverage", "schedule", "profile", "record_function", "chrome_trace_handler",
    "tensorboard_trace_handler", "set_range_stats_enabled", "range_stats_enabled", "flush_range_stats",
    "set_thread_name",
]


class ProfilerActivity(enum.IntEnum):
    """torch.profiler.ProfilerActivity. livemon records CPU ranges; CUDA is accepted and records nothing."""
    CPU = 0
    CUDA = 1


# torch.autograd.DeviceType's members and values, for code that names them.
DeviceType = enum.IntEnum("DeviceType", [
    ("CPU", 0), ("CUDA", 1), ("MKLDNN", 2), ("OPENGL", 3), ("OPENCL", 4), ("IDEEP", 5), ("HIP", 6), ("FPGA", 7),
    ("ORT", 8), ("XLA", 9), ("Vulkan", 10), ("Metal", 11), ("XPU", 12), ("MPS", 13), ("Meta", 14), ("HPU", 15),
    ("VE", 16), ("Lazy", 17), ("IPU", 18),
])


def supported_activities():
    """The activities livemon records: CPU ranges only (torch adds CUDA when kineto has CUPTI)."""
    return {ProfilerActivity.CPU}


def kineto_available():
    """False: livemon does not use kineto."""
    return False


def _activities(activities, use_cuda):
    """The set of ProfilerActivity in ``activities`` (torch's own members count by name)."""
    if activities is None:
        chosen = supported_activities()
    else:
        chosen = set()
        for activity in activities:
            name = getattr(activity, "name", activity)
            if name not in ProfilerActivity.__members__:
                raise ValueError(f"unknown profiler activity {activity!r}; expected ProfilerActivity.CPU or .CUDA")
            chosen.add(ProfilerActivity[name])
    if use_cuda:  # torch's deprecated spelling of activities=[..., CUDA]
        chosen.add(ProfilerActivity.CUDA)
    return chosen


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


# The profile started last and not stopped: torch_bridge's optimizer hook ends its steps.
_running = None


def _optimizer_stepped():
    """Called by livemon.torch_bridge after every (outermost) optimizer.step()."""
    running = _running
    if running is not None:
        running._optimizer_stepped()


class profile:
    """torch.profiler.profile for livemon's ranges: ``schedule`` (from ``schedule()``, or any
    callable step -> ProfilerAction; without one, everything from start to stop is recorded),
    ``on_trace_ready(prof)`` called when a RECORD_AND_SAVE step ends and when ``stop()`` ends a
    recording (``prof.trace()`` and ``prof.key_averages()`` then describe it), ``range_stats``
    (time ranges into ``range/<name>`` Stats while running) and ``record_steps`` (a
    "ProfilerStep#<n>" range per step). Use it as a context manager, or call start() and stop();
    call step() after each training step. One profile runs at a time: starting a second raises
    ValueError.

    Once ``livemon.torch_bridge.install()`` has run, a profile whose step() is never called
    follows the optimizer: each ``optimizer.step()`` (on the thread that started the profile) ends
    a profiler step. The first explicit step() turns that off for the profile, and when it comes
    right after an optimizer-ended step it ends nothing more, so torch.profiler code that calls
    step() after optimizer.step() counts each step once.

    torch.profiler 1.13's other arguments are accepted so its code runs unchanged, and ignored,
    since livemon records only labelled CPU ranges: ``activities`` (ProfilerActivity.CUDA records
    nothing; an unknown activity raises ValueError), ``record_shapes``, ``profile_memory``,
    ``with_stack``, ``with_flops``, ``with_modules``, ``experimental_config`` and ``use_cuda``."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, use_cuda=None, range_stats=True, record_steps=True):
        self.activities = _activities(activities, use_cuda)
        # Kept as torch keeps them, for code that reads them back; livemon records none of these.
        self.record_shapes = bool(record_shapes)
        self.profile_memory = bool(profile_memory)
        self.with_stack = bool(with_stack)
        self.with_flops = bool(with_flops)
        self.with_modules = bool(with_modules)
        self.experimental_config = experimental_config
        self.on_trace_ready = on_trace_ready
        self._trace = None
        self._explicit_steps = False  # step() was called: the optimizer no longer ends steps
        self._optimizer_ended_step = False
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
        global _running
        self._profiler.start()
        _running = self

    def stop(self):
        global _running
        if _running is self:
            _running = None
        self._profiler.stop()

    def step(self):
        """Ends the current step; may call on_trace_ready."""
        if not self._explicit_steps:
            self._explicit_steps = True
            if self._optimizer_ended_step:
                return  # optimizer.step() has just ended this step
        self._profiler.step()

    def _optimizer_stepped(self):
        if not self._explicit_steps:
            self._optimizer_ended_step = True
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

    def _recorded_trace(self):
        if self._trace is None:
            raise RuntimeError("no trace has been recorded yet")
        return self._trace

    def export_chrome_trace(self, path):
        """Writes the last trace as Chrome trace-event JSON to ``path``."""
        self._recorded_trace().save(path)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """The last trace's ranges summed per name (a KeyAverages; ``.table()`` prints torch's
        table). livemon records no input shapes or stacks, so both groupings are by name alone."""
        del group_by_input_shape, group_by_stack_n
        return KeyAverages.from_ranges(self._recorded_trace().ranges)


def chrome_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An on_trace_ready handler writing each trace to ``dir_name`` (created if missing) as
    ``<worker_name>.<step>.<ms>.pt.trace.json`` (``.json.gz`` with ``use_gzip``, which TensorBoard's
    profiler plugin also reads); ``worker_name`` defaults to "<host>_<pid>", as
    torch.profiler.tensorboard_trace_handler's."""

    def handler(prof):
        path = prof.trace().save_to_dir(dir_name, worker_name or "")
        if use_gzip:
            _gzip_in_place(path)

    return handler


def _gzip_in_place(path):
    """Replaces ``path`` by ``path``.gz; a reader never sees a partial .gz (written aside, then renamed)."""
    path = os.fspath(path)
    partial = path + ".gz.partial"
    with open(path, "rb") as source, gzip.open(partial, "wb") as target:
        while chunk := source.read(1 << 20):
            target.write(chunk)
    os.replace(partial, path + ".gz")
    os.remove(path)


# torch.profiler's name for the same handler.
tensorboard_trace_handler = chrome_trace_handler
