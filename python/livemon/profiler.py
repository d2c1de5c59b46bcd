"""livemon.profiler: labelled CPU ranges and a scheduled profiler, with torch.profiler's names
(torch 2.x's, and torch 1.13's where they differ).

Code written for torch.profiler runs with a changed import:

    from livemon import profiler       # was: import torch.profiler as profiler

    with profiler.profile(activities=[profiler.ProfilerActivity.CPU],
                          schedule=profiler.schedule(wait=5, warmup=1, active=3, repeat=2),
                          on_trace_ready=profiler.tensorboard_trace_handler("traces"),
                          record_shapes=True, acc_events=True) as prof:
        for batch in loader:
            with profiler.record_function("forward"):
                loss = model(batch)
            prof.step()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))

The files open in ui.perfetto.dev and chrome://tracing. While a profile runs (or after
``set_range_stats_enabled(True)``), every range's duration also goes to a livemon Stat named
``range/<name>`` (count, mean, p50, p99, max, in milliseconds), which the dashboard shows live.

Unlike torch.profiler this records only the ranges you label (no operator or device events,
unless livemon.torch_bridge.install(ops=True) adds PyTorch's operators), and a range costs
nanoseconds instead of microseconds. The arguments for what livemon does not record are accepted
and have no effect; each is listed where it is taken (profile, record_function, itt,
ExecutionTraceObserver).
"""

import contextlib
import enum
import gzip
import json
import os
import secrets
import socket
import time
import uuid

from ._livemon import (  # noqa: F401  (the public API)
    ProfilerAction,
    ScheduleError,
    Trace,
    _Profiler,
    _Range,
    _Schedule,
    flush_range_stats,
    range_stats_enabled,
    set_range_stats_enabled,
    set_thread_name,
)
from ._key_averages import (  # noqa: F401
    SORT_KEYS,
    DeviceType,
    EventList,
    FunctionEvent,
    FunctionEventAvg,
    KeyAverage,
    KeyAverages,
    UnknownSortKey,
)
from ._profiler_compat import (  # noqa: F401
    ExecutionGraphObserver,
    ExecutionTraceObserver,
    _ExperimentalConfig,
    _make_itt,
)

__all__ = [
    "ProfilerAction", "ProfilerActivity", "DeviceType", "supported_activities", "kineto_available", "Trace",
    "EventList", "FunctionEvent", "FunctionEventAvg", "KeyAverages", "KeyAverage", "schedule", "ScheduleError",
    "profile", "record_function", "ExecutionTraceObserver", "itt", "chrome_trace_handler",
    "tensorboard_trace_handler", "set_range_stats_enabled", "range_stats_enabled", "flush_range_stats",
    "set_thread_name",
]


class ProfilerActivity(enum.IntEnum):
    """torch.profiler.ProfilerActivity, with torch 2.13's members and values (torch 1.13 had CPU=0,
    CUDA=1: compare by name). livemon records CPU ranges; the device activities are accepted and
    record nothing."""
    CPU = 0
    XPU = 1
    MTIA = 4
    CUDA = 2
    HPU = 3
    PrivateUse1 = 5


def supported_activities():
    """The activities livemon records: CPU ranges only (torch adds the devices its build traces)."""
    return {ProfilerActivity.CPU}


def kineto_available():
    """False: livemon does not use kineto."""
    return False


itt = _make_itt(__name__ + ".itt")


def _activity(item):
    """A ProfilerActivity from ours, torch's (any version) or a name."""
    name = getattr(item, "name", item)
    if not isinstance(name, str) or name not in ProfilerActivity.__members__:
        raise ValueError(f"unknown profiler activity {item!r}; expected one of ProfilerActivity."
                         f"{{{','.join(ProfilerActivity.__members__)}}}")
    return ProfilerActivity[name]


def _activities(activities, use_cuda):
    """The set of ProfilerActivity in ``activities``: activities, or torch 2.x's dicts of an activity
    to the kinds of its events to collect (the kinds are ignored)."""
    if activities is None:
        chosen = supported_activities()
    else:
        chosen = set()
        for item in activities:
            chosen.update(_activity(key) for key in (item if isinstance(item, dict) else [item]))
    if use_cuda is not None:  # torch's deprecated spelling of activities=[..., CUDA]
        if use_cuda:
            chosen.add(ProfilerActivity.CUDA)
        else:
            chosen.discard(ProfilerActivity.CUDA)
    return chosen


def _use_device(activities):
    """torch's profile.use_device: the device the activities name, CUDA first."""
    for activity, device in ((ProfilerActivity.CUDA, "cuda"), (ProfilerActivity.XPU, "xpu"),
                             (ProfilerActivity.MTIA, "mtia"), (ProfilerActivity.HPU, "hpu"),
                             (ProfilerActivity.PrivateUse1, "privateuseone")):
        if activity in activities:
            return device
    return None


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """torch.profiler.schedule: skip ``skip_first`` steps, then cycles of ``wait`` idle steps,
    ``warmup`` steps and ``active`` recorded steps (the last one RECORD_AND_SAVE), ``repeat``
    times (0: without end). With ``skip_first_wait`` (torch 2.x; any value but 0) the first cycle
    has no wait: it starts right after ``skip_first``, and only later cycles wait.

    Returns a callable step -> ProfilerAction that the profiler runs without calling back into
    Python. A bad argument, or calling it with a negative step, raises ScheduleError naming the
    value: a ValueError and, as torch raises, an AssertionError. torch's warning about warmup=0
    is not repeated: livemon's ranges need no warmup."""
    return _Schedule(wait=wait, warmup=warmup, active=active, repeat=repeat, skip_first=skip_first,
                     skip_first_wait=skip_first_wait)


def _action(value):
    """A schedule's answer as livemon's ProfilerAction (torch's members count by name)."""
    action = value if isinstance(value, ProfilerAction) else ProfilerAction.__members__.get(
        getattr(value, "name", None))
    if action is None:
        raise ValueError(f"a profiler schedule must return a ProfilerAction, got {value!r}")
    if action == ProfilerAction.DEVICE_STOPPED:
        raise ValueError("ProfilerAction.DEVICE_STOPPED is set internally by the profiler and must not be "
                         "returned by a user-provided schedule")
    return action


def _checked_schedule(user_schedule):
    return lambda step: _action(user_schedule(step))


class record_function(contextlib.ContextDecorator):
    """A labelled range: ``with record_function("forward"): ...`` or ``@record_function("load")``.
    Costs next to nothing while no profile runs and range stats are off. ``args`` (torch 2.x: a
    string shown with the range in torch's trace) is kept as ``self.args`` and not recorded."""

    def __init__(self, name, args=None):
        self.name = str(name)
        self.args = args
        self._range = _Range(self.name)

    def __enter__(self):
        self._range.open()
        return self

    def __exit__(self, *exc):
        self._range.close()
        return False

    def _recreate_cm(self):
        # A decorated function may run on several threads, or recursively: a range per call.
        return record_function(self.name, self.args)


# The profile started last and not stopped: torch_bridge's optimizer hook ends its steps.
_running = None


def _optimizer_stepped():
    """Called by livemon.torch_bridge after every (outermost) optimizer.step()."""
    running = _running
    if running is not None:
        running._optimizer_stepped()


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
# Keys of livemon's own in the trace JSON, which metadata must not shadow.
_RESERVED_METADATA = ("traceEvents", "displayTimeUnit", "otherData")


class profile:
    """torch.profiler.profile for livemon's ranges: ``schedule`` (from ``schedule()``, or any
    callable step -> ProfilerAction; without one, everything from start to stop is recorded),
    ``on_trace_ready(prof)`` called when a RECORD_AND_SAVE step ends and when ``stop()`` ends a
    recording (``prof.events()``, ``prof.key_averages()`` and ``prof.export_chrome_trace()`` then
    describe it), ``range_stats`` (time ranges into ``range/<name>`` Stats while running) and
    ``record_steps`` (a "ProfilerStep#<n>" range per step). Use it as a context manager, or call
    start() and stop(); call step() after each training step. One profile runs at a time:
    starting a second raises ValueError.

    Honoured as in torch 2.x: ``acc_events`` (events() and key_averages() cover every recording
    of this profile instead of the last; export_chrome_trace() writes the last, as torch's),
    ``custom_trace_id_callback`` (called as each cycle begins; the id is get_trace_id() and the
    trace JSON's "trace_id", a random hex UUID without it) and ``execution_trace_observer`` (its
    start() and stop() run with each recording, its cleanup() when the with block ends).

    Accepted and ignored, since livemon records only labelled CPU ranges: ``activities`` other
    than CPU (XPU, MTIA, CUDA, HPU, PrivateUse1, torch 2.x's dicts of activity to event kinds; an
    unknown activity raises ValueError), ``record_shapes``, ``profile_memory``, ``with_stack``,
    ``with_flops``, ``with_modules``, ``experimental_config``, ``use_cuda`` and
    ``post_processing_timeout_s`` (a negative one raises ValueError, as in torch). They are kept as
    attributes of the same names.

    Once ``livemon.torch_bridge.install()`` has run, a profile whose step() is never called
    follows the optimizer: each ``optimizer.step()`` (on the thread that started the profile) ends
    a profiler step. The first explicit step() turns that off for the profile, and when it comes
    right after an optimizer-ended step it ends nothing more, so torch.profiler code that calls
    step() after optimizer.step() counts each step once."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None, range_stats=True,
                 record_steps=True):
        if post_processing_timeout_s is not None and post_processing_timeout_s < 0:
            raise ValueError(f"post_processing_timeout_s must be non-negative, got {post_processing_timeout_s}")
        self.activities = _activities(activities, use_cuda)
        self.use_device = _use_device(self.activities)
        # Kept as torch keeps them, for code that reads them back; livemon records none of these.
        self.record_shapes = bool(record_shapes)
        self.profile_memory = bool(profile_memory)
        self.with_stack = bool(with_stack)
        self.with_flops = bool(with_flops)
        self.with_modules = bool(with_modules)
        self.experimental_config = experimental_config
        self.post_processing_timeout_s = post_processing_timeout_s
        self.execution_trace_observer = (execution_trace_observer or
                                         ExecutionTraceObserver.build_execution_trace_obs_from_env())
        self.acc_events = bool(acc_events)
        self.custom_trace_id_callback = custom_trace_id_callback
        self.schedule = schedule
        self.record_steps = bool(record_steps) and schedule is not None
        self.on_trace_ready = on_trace_ready
        self._recordings = []  # (Trace, trace id) handed over: the last one, or all with acc_events
        self._trace_id = None
        self._metadata = {}  # key -> JSON text, in the order added
        self._observing = False  # the execution_trace_observer was started and not stopped
        self._explicit_steps = False  # step() was called: the optimizer no longer ends steps
        self._optimizer_ended_step = False
        if schedule is not None and not isinstance(schedule, _Schedule):
            schedule = _checked_schedule(schedule)
        self._profiler = _Profiler(schedule, self._trace_ready, range_stats, record_steps)

    def _trace_ready(self, trace):
        self._stop_observer()
        recording = (trace, self._trace_id)
        self._recordings = self._recordings + [recording] if self.acc_events else [recording]
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _entered(self, previous):
        """After a transition from ``previous``: a new cycle gets its trace id, and the observer
        runs while recording (torch's prepare_trace and start_trace/stop_trace)."""
        action = self._profiler.current_action
        if action != ProfilerAction.NONE and previous in (ProfilerAction.NONE, ProfilerAction.RECORD_AND_SAVE):
            callback = self.custom_trace_id_callback
            self._trace_id = callback() if callback is not None else f"{uuid.uuid4().int:032X}"
        if action not in _RECORDING:
            self._stop_observer()
        elif not self._observing and self.execution_trace_observer is not None:
            self.execution_trace_observer.start()
            self._observing = True

    def _stop_observer(self):
        if self._observing:
            self._observing = False
            self.execution_trace_observer.stop()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        if self.execution_trace_observer is not None:
            self.execution_trace_observer.cleanup()
        return False

    def start(self):
        global _running
        if self._profiler.running:
            return
        self._profiler.start()
        _running = self
        self._entered(ProfilerAction.NONE)

    def stop(self):
        global _running
        if _running is self:
            _running = None
        try:
            self._profiler.stop()
        finally:
            self._stop_observer()

    def step(self):
        """Ends the current step; may call on_trace_ready."""
        if not self._explicit_steps:
            self._explicit_steps = True
            if self._optimizer_ended_step:
                return  # optimizer.step() has just ended this step
        self._advance()

    def _optimizer_stepped(self):
        if not self._explicit_steps:
            self._optimizer_ended_step = True
            self._advance()

    def _advance(self):
        previous, step = self._profiler.current_action, self._profiler.step_num
        try:
            self._profiler.step()
        finally:
            if self._profiler.step_num != step:  # advanced, even if on_trace_ready raised
                self._entered(previous)

    @property
    def step_num(self):
        return self._profiler.step_num

    @property
    def current_action(self):
        return self._profiler.current_action

    def trace(self):
        """The last trace handed over (a Trace), or None."""
        return self._recordings[-1][0] if self._recordings else None

    def get_trace_id(self):
        """The id of the current (or last) profiling cycle; None before the first."""
        return self._trace_id

    def set_custom_trace_id_callback(self, callback):
        """The callback that names the cycles that begin from now on."""
        self.custom_trace_id_callback = callback

    def _last_recording(self):
        if not self._recordings:
            raise RuntimeError("no trace has been recorded yet")
        return self._recordings[-1]

    def _ranges(self):
        """The ranges events() and key_averages() describe: the last recording's, or with
        ``acc_events`` every recording's."""
        self._last_recording()
        return [r for trace, _ in self._recordings for r in trace.ranges]

    def events(self):
        """The recorded ranges (an EventList of FunctionEvent): the last recording's, or with
        ``acc_events`` every recording's."""
        return EventList.from_ranges(self._ranges())

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """events() summed per name (a KeyAverages; ``.table()`` prints torch's table). livemon
        records no input shapes, stacks or overloads, so every grouping is by name alone."""
        del group_by_input_shape, group_by_stack_n, group_by_overload_name
        return KeyAverages.from_ranges(self._ranges())

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Collapsed stacks for flame graph tools: see EventList.export_stacks (livemon's stacks are
        the labelled ranges, so with_stack is not needed)."""
        self.events().export_stacks(path, metric)

    def toggle_collection_dynamic(self, enable, activities):
        """Accepted, does nothing: livemon's CPU ranges are recorded while the schedule says so."""
        del enable, activities

    def add_metadata(self, key, value):
        """A string ``value`` under ``key`` at the top of every trace this profile exports."""
        self._set_metadata(key, json.dumps(str(value)))

    def add_metadata_json(self, key, value):
        """A JSON ``value`` (text) under ``key`` at the top of every trace this profile exports;
        ValueError if it is not JSON (torch would write a trace no reader opens)."""
        try:
            json.loads(value)
        except (TypeError, ValueError) as error:
            raise ValueError(f"add_metadata_json({key!r}, ...): the value is not JSON text: {error}") from None
        self._set_metadata(key, value.strip())

    # torch's name for metadata given before the profile starts; livemon keeps all metadata alike.
    preset_metadata_json = add_metadata_json

    def _set_metadata(self, key, json_text):
        key = str(key)
        if key in _RESERVED_METADATA:
            raise ValueError(f"metadata key {key!r} is the trace's own; choose another")
        self._metadata[key] = json_text

    def _chrome_json(self, trace, trace_id):
        """The trace's Chrome JSON with the trace id and the metadata as top-level keys, first (as
        torch writes them)."""
        text = trace.to_chrome_json()
        fields = {} if trace_id is None else {"trace_id": json.dumps(trace_id)}
        fields.update(self._metadata)
        if not fields:
            return text
        assert text.startswith("{"), "livemon's Chrome JSON is an object"
        return "{" + "".join(f"{json.dumps(key)}:{value}," for key, value in fields.items()) + text[1:]

    def export_chrome_trace(self, path, use_python_export=False):
        """Writes the last recording as Chrome trace-event JSON to ``path``, gzipped when it ends in
        ".gz" (as torch), atomically (a temporary file renamed into place). ``use_python_export``
        is accepted (livemon has one writer)."""
        del use_python_export
        _write_text(path, self._chrome_json(*self._last_recording()))


def _write_text(path, text):
    """Writes ``text`` to ``path`` through a temporary file renamed into place, so a reader never
    sees half a file; gzip for a ".gz" path. The temporary file is created exclusively beside
    ``path`` under an unguessable name (64 random bits), so nothing another user placed in a shared
    directory is written through, with mode 0666 under the umask (not tempfile.mkstemp's 0600)."""
    path = os.fspath(path)
    partial = f"{path}.{secrets.token_hex(8)}.partial"
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    try:
        with open(fd, "wb") as raw:
            if path.endswith(".gz"):
                with gzip.GzipFile(filename=os.path.basename(path)[:-3], mode="wb", fileobj=raw) as packed:
                    packed.write(text.encode())
            else:
                raw.write(text.encode())
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(partial)
        raise


def _trace_dir(dir_name):
    try:
        os.makedirs(dir_name, exist_ok=True)
    except OSError as error:
        raise RuntimeError(f"cannot create trace directory {dir_name}: {error}") from error


def _default_worker_name():
    return f"{socket.gethostname()}_{os.getpid()}"


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False, use_python_export=False):
    """torch.profiler.tensorboard_trace_handler: an on_trace_ready handler writing each recording to
    ``dir_name`` (created if missing) as ``<worker_name>.<time in ns>.pt.trace.json`` (``.json.gz``
    with ``use_gzip``), the names torch 2.x writes and TensorBoard's profiler plugin reads.
    ``worker_name`` defaults to "<host>_<pid>". ``use_python_export`` is accepted (livemon has one
    writer)."""
    del use_python_export

    def handler(prof):
        _trace_dir(dir_name)
        name = f"{worker_name or _default_worker_name()}.{time.time_ns()}.pt.trace.json"
        prof.export_chrome_trace(os.path.join(dir_name, name + (".gz" if use_gzip else "")))

    return handler


def chrome_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An on_trace_ready handler writing each recording to ``dir_name`` (created if missing) as
    ``<worker_name>.<step>.<ms since the epoch>.pt.trace.json`` (``.json.gz`` with
    ``use_gzip``): tensorboard_trace_handler's files with the step that ended the recording in
    the name. ``worker_name`` defaults to "<host>_<pid>"."""

    def handler(prof):
        _trace_dir(dir_name)
        name = f"{worker_name or _default_worker_name()}.{prof.trace().step}.{time.time_ns() // 1_000_000}"
        prof.export_chrome_trace(os.path.join(dir_name, name + ".pt.trace.json" + (".gz" if use_gzip else "")))

    return handler
