"""Forwards torch.monitor's events into livemon.

Code already instrumented with torch.monitor reaches livemon's publisher, recordings, TensorBoard
files and dashboard unchanged after one call::

    import livemon, livemon.torch_bridge
    publisher = livemon.Publisher(run="resnet")
    livemon.torch_bridge.install()
    # torch.monitor.Stat windows now arrive as "torch.monitor.Stat" events, which the dashboard
    # and livemon.TensorboardEventHandler treat like livemon's own Stat events.

Events keep their names, timestamps and data. torch.monitor's events have no step of their own:
a forwarded event states its step with an int data field "step" when it has one (it stays in the
data, and ``event.stated_step`` reads it), and otherwise carries the livemon step current when
torch.monitor logged it (``livemon.set_step``), as Stat windows do. torch.monitor turns bools into floats before any
handler sees them, so a forwarded bool arrives as 1.0 or 0.0. torch.monitor calls its handlers under
a lock of its own, so torch.monitor's deadlock with several logging threads remains; livemon's
own Stats and log_event do not have it. The bridge removes itself when the interpreter exits
(torch.monitor would hang at exit otherwise), so torch.monitor Stats still open then are not
forwarded.
"""

import atexit
import threading
import warnings

from . import _livemon

_lock = threading.Lock()
_handle = None
_exit_hook_registered = False
_forwarded = 0
_errors = 0


def _forward(event, _Event=_livemon.Event, _log_event=_livemon.log_event):
    # Never raise: torch.monitor would hand the exception to the code that logged the event.
    global _forwarded, _errors
    try:
        _log_event(_Event(event.name, event.timestamp, event.data))
        _forwarded += 1
    except Exception as error:  # noqa: BLE001 - the training loop must go on
        _errors += 1
        if _errors == 1:
            warnings.warn(f"livemon.torch_bridge could not forward {event.name!r}: {error!r} "
                          "(later failures are only counted: livemon.torch_bridge.error_count())",
                          RuntimeWarning, stacklevel=2)


def install():
    """Registers a torch.monitor event handler that forwards every event into livemon.log_event.

    Calling it again while installed does nothing. Returns the torch.monitor handle.
    """
    global _handle, _exit_hook_registered
    import torch.monitor  # imported here: `import livemon` must not need torch

    with _lock:
        if _handle is None:
            _handle = torch.monitor.register_event_handler(_forward)
        if not _exit_hook_registered:
            # torch.monitor 1.13 destroys its handler list after the interpreter is gone, and
            # hangs there releasing a Python handler: remove ours while Python still runs.
            atexit.register(uninstall)
            _exit_hook_registered = True
        return _handle


def uninstall():
    """Removes the handler that install() registered. Returns False if it was not installed."""
    global _handle
    import torch.monitor

    with _lock:
        if _handle is None:
            return False
        # torch.monitor crashes when a handle is unregistered twice; this one is forgotten first.
        handle, _handle = _handle, None
        torch.monitor.unregister_event_handler(handle)
        return True


def installed():
    """Whether the bridge is installed."""
    return _handle is not None


def forwarded_count():
    """Events forwarded so far."""
    return _forwarded


def error_count():
    """Events that could not be forwarded (they are counted, never raised into torch.monitor)."""
    return _errors
