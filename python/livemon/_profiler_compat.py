"""The parts of torch.profiler's API that livemon.profiler accepts for code written against torch,
with little or nothing behind them: kineto's experimental options, Intel ITT ranges (livemon
ranges here) and the execution trace observer. livemon.profiler re-exports each under torch's
name; see its docstring."""

import contextlib
import sys
import threading
import types

from ._livemon import _Range


class _ExperimentalConfig:
    """torch.profiler._ExperimentalConfig's keywords, kept as attributes: kineto's options, which
    livemon does not have. A profile accepts it (or torch's own) and ignores it."""

    def __init__(self, profiler_metrics=(), profiler_measure_per_kernel=False, verbose=False,
                 performance_events=(), enable_cuda_sync_events=False, adjust_profiler_step=False,
                 disable_external_correlation=False, profile_all_threads=False, capture_overload_names=False,
                 record_python_gc_info=False, expose_kineto_event_metadata=False, custom_profiler_config="",
                 adjust_timestamps=False, trace_only=False):
        self.profiler_metrics = list(profiler_metrics)
        self.profiler_measure_per_kernel = profiler_measure_per_kernel
        self.verbose = verbose
        self.performance_events = list(performance_events)
        self.enable_cuda_sync_events = enable_cuda_sync_events
        self.adjust_profiler_step = adjust_profiler_step
        self.disable_external_correlation = disable_external_correlation
        self.profile_all_threads = profile_all_threads
        self.capture_overload_names = capture_overload_names
        self.record_python_gc_info = record_python_gc_info
        self.expose_kineto_event_metadata = expose_kineto_event_metadata
        self.custom_profiler_config = custom_profiler_config
        self.adjust_timestamps = adjust_timestamps
        self.trace_only = trace_only


def _make_itt(name):
    """livemon.profiler.itt, torch.profiler.itt's functions: its ranges are livemon ranges."""
    module = types.ModuleType(name, """torch.profiler.itt's functions for livemon.

Intel ITT ranges (for VTune) become livemon ranges: range_push/range_pop and range() record
like record_function, so they show in traces and as range/<name> Stats. is_available() is True.
mark() is accepted and records nothing: livemon has no instant events.""")
    open_ranges = threading.local()

    def stack():
        if not hasattr(open_ranges, "stack"):
            open_ranges.stack = []
        return open_ranges.stack

    def is_available():
        """True: livemon records the ranges."""
        return True

    def range_push(msg):
        """Opens a range named ``msg`` on this thread; returns its depth among this thread's itt
        ranges (0 for the outermost)."""
        opened = _Range(str(msg))
        opened.open()
        ranges = stack()
        ranges.append(opened)
        return len(ranges) - 1

    def range_pop():
        """Closes this thread's innermost itt range; returns its depth, or -1 if none is open."""
        ranges = stack()
        if not ranges:
            return -1
        ranges.pop().close()
        return len(ranges)

    def mark(msg):
        """Accepted, records nothing (livemon has no instant events)."""
        del msg

    @contextlib.contextmanager
    def range(msg, *args, **kwargs):  # noqa: A001  (torch's name)
        """A range named ``msg.format(*args, **kwargs)`` around the block (or decorated function)."""
        range_push(msg.format(*args, **kwargs))
        try:
            yield
        finally:
            range_pop()

    for function in (is_available, range_push, range_pop, mark, range):
        function.__module__ = module.__name__
        setattr(module, function.__name__, function)
    module.__all__ = ["is_available", "range_push", "range_pop", "mark", "range"]
    sys.modules[module.__name__] = module  # `import livemon.profiler.itt` works as for torch
    return module


class ExecutionTraceObserver:
    """torch.profiler.ExecutionTraceObserver, for code that builds one. livemon records no
    execution graph (operators with their inputs and outputs), so the observer writes no file: it
    keeps torch's state (``register_callback(path)`` returns it, ``is_registered``,
    ``is_running()``, ``get_output_file_path()``), a profile given it as
    ``execution_trace_observer`` starts and stops it with each recording and cleans it up at the
    end of its with block, as torch does, and every method runs without error.
    ``build_execution_trace_obs_from_env()`` returns None: livemon has none to build. Any object
    with start(), stop() and cleanup() may be given to a profile instead, as in torch."""

    def __init__(self):
        self._registered = False
        self._execution_trace_running = False
        self.extra_resources_collection = False
        self.resources_dir = ""
        self.output_file_path = ""
        self.output_file_path_observer = ""

    @staticmethod
    def build_execution_trace_obs_from_env():
        return None

    @staticmethod
    def get_resources_dir_for_et_path(trace_path, create_dir=False):
        del trace_path, create_dir
        return None

    def register_callback(self, output_file_path):
        if not self._registered:
            self.output_file_path = self.output_file_path_observer = output_file_path
            self._registered = True
        return self

    def unregister_callback(self):
        if self._registered:
            self.stop()
            self._registered = False

    @property
    def is_registered(self):
        return self._registered

    def is_running(self):
        return self._execution_trace_running

    def set_extra_resource_collection(self, val):
        self.extra_resources_collection = val

    def get_resources_dir(self, can_create=False):
        del can_create
        return None

    def start(self):
        if self._registered:
            self._execution_trace_running = True

    def stop(self):
        self._execution_trace_running = False

    def cleanup(self):
        self.unregister_callback()

    def get_output_file_path(self):
        return self.output_file_path or None


# torch 1.13's name for it.
ExecutionGraphObserver = ExecutionTraceObserver
