"""livemon: live monitoring for training jobs, with torch.monitor's API.

Switching from torch.monitor is a change of import::

    import livemon as monitor          # was: import torch.monitor as monitor

    loss = monitor.Stat("loss", [monitor.Aggregation.MEAN, monitor.Aggregation.P99],
                        datetime.timedelta(seconds=1))
    loss.add(0.5)

torch.monitor 2.x's names work too: ``_WaitCounter(key).guard()`` (livemon's WaitCounter),
``register_event_handler(callback=...)``, ``unregister_event_handler(handler=...)``,
``Stat.add(v=...)``, assignable ``Event.name``/``timestamp``/``data``, and
``TensorboardEventHandler(summary_writer)`` writing through the writer.

Where livemon differs from torch.monitor (1.13 and 2.x) it is on purpose (see docs/python.md,
"Where livemon differs from torch.monitor"): windows are logged when they end, VALUE works, a bool stays a bool, a handler's
exception is caught and counted, unregistering twice is harmless, a zero window raises ValueError,
and Stat events are named ``livemon.Stat`` (STAT_EVENT) instead of ``torch.monitor.Stat``.

Beyond torch.monitor: ``Publisher`` sends every event to the livemon dashboard,
``TensorboardEventHandler`` writes TensorBoard files without TensorBoard installed, and
``livemon.torch_bridge.install()`` forwards existing torch.monitor events into livemon, and
``livemon.profiler`` gives torch.profiler's record_function, schedule and profile for labelled CPU
ranges, live as ``range/<name>`` Stats and as Chrome traces.
"""

from typing import Union

from ._livemon import (  # noqa: F401  (the public API)
    COUNT,
    MAX,
    MEAN,
    MIN,
    P50,
    P90,
    P99,
    STAT_EVENT,
    STDDEV,
    SUM,
    TORCH_STAT_EVENT,
    VALUE,
    Aggregation,
    Event,
    EventHandlerHandle,
    Publisher,
    Stat,
    SystemStatsHandle,
    TensorboardEventHandler,
    TransportError,
    WaitCounter,
    WaitCounterGuard,
    _WaitCounter,
    _WaitCounterTracker,
    __version__,
    clear_run_config,
    clear_step,
    current_step,
    dropped_reentrant_event_count,
    enable_system_stats,
    handler_error_count,
    last_handler_error,
    log_event,
    register_event_handler,
    registered_event_handler_count,
    run_config,
    set_run_config,
    set_step,
    unregister_event_handler,
)

from . import profiler  # noqa: E402,F401  (livemon.profiler: ranges and the scheduled profiler)

# The values an Event's data may hold, as torch.monitor names them.
data_value_t = Union[str, float, int, bool]

__all__ = [
    "Aggregation", "VALUE", "MEAN", "COUNT", "SUM", "MAX", "MIN", "STDDEV", "P50", "P90", "P99",
    "Stat", "Event", "data_value_t", "log_event", "register_event_handler", "unregister_event_handler",
    "EventHandlerHandle", "STAT_EVENT", "TORCH_STAT_EVENT", "WaitCounter", "WaitCounterGuard",
    "TensorboardEventHandler", "Publisher", "TransportError", "handler_error_count", "last_handler_error",
    "registered_event_handler_count", "dropped_reentrant_event_count", "profiler",
    "enable_system_stats", "SystemStatsHandle", "set_run_config", "run_config", "clear_run_config",
]
