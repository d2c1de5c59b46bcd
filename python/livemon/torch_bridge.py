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

PyTorch's own operators, with no change to the training code::

    livemon.torch_bridge.install(ops=True)            # every aten:: op call, autograd node and
                                                      # torch.profiler.record_function label
    livemon.torch_bridge.install(ops=True, ops_sample=10)   # one call in 10, on average

times each of them as a livemon range: live ``range/<name>`` Stats (range Stats are switched on
if they were off) and part of livemon.profiler's traces. Operators are timed by a libtorch
RecordFunction observer in the extension ``livemon._torch_ops``; it runs on whichever thread runs
an operator and never takes the GIL. PyTorch has no stable C++ ABI, so the observer is compiled
against the running torch the first time ``install(ops=True)`` needs it and cached (see
``livemon.torch_ops``: it needs a C++ compiler once, or ``python -m livemon.torch_ops build``
ahead of time; without one ``install(ops=True)`` raises ImportError saying what is missing).
On torch 2.x the observer also receives torch's own wait counters (``c10::monitor``, such as
``pytorch.wait_counter.TCPStore__get``) as livemon WaitCounters of the same keys
(``wait_counters``, on with ``ops``): their totals and a Stat named after each key.

Steps follow the optimizer: every ``optimizer.step()`` makes livemon's step the next one (1 after
the first, when none was set), so the job needs no ``livemon.set_step``, and a running
``livemon.profiler.profile`` whose step() is never called ends its steps there too. An optimizer
whose step() calls its base class's counts once. On torch 2.x a global optimizer step post hook
(``torch.optim.optimizer.register_optimizer_step_post_hook``) sees every step, with no native
code. torch 1.13 has no optimizer step hooks: there the bridge wraps every Optimizer class's
step() (classes defined later too), and when livemon._torch_ops is there livemon's step advances
when the range torch wraps every optimizer step in (``Optimizer.step#<Class>.step``) ends.
"""

import atexit
import functools
import importlib
import sys
import threading
import warnings

from . import _livemon
from . import torch_ops as _builder

_lock = threading.Lock()
_handle = None
_exit_hook_registered = False
_forwarded = 0
_errors = 0
_ops = None  # livemon._torch_ops while its observers are installed
_enabled_range_stats = False
_follow_optimizer = False  # whether the optimizer step wrappers act (they stay in place)
_optimizers_wrapped = False
_step_depth = threading.local()
_post_hook = None  # torch 2.x: the handle of the global optimizer step post hook
_step_wrapper_code = None  # torch 2.x: the code of the wrapper torch puts around every step()


def _after_optimizer_step():
    if _ops is None or not _ops.steps_installed():
        # Without the extension's observer, livemon's step advances here.
        _livemon.set_step((_livemon.current_step() or 0) + 1)
    from . import profiler
    profiler._optimizer_stepped()


def _wrap_optimizer_step(cls):
    step = cls.__dict__.get("step")
    if step is None or getattr(step, "_livemon_wrapped", False):
        return

    @functools.wraps(step)  # keeps torch's "hooked" mark, so torch does not wrap it twice
    def step_then_follow(*args, **kwargs):
        # A subclass's step() calling its base's: only the outermost call ends a training step.
        depth = getattr(_step_depth, "value", 0)
        _step_depth.value = depth + 1
        try:
            result = step(*args, **kwargs)
        finally:
            _step_depth.value = depth
        if depth == 0 and _follow_optimizer:
            _after_optimizer_step()
        return result

    step_then_follow._livemon_wrapped = True
    cls.step = step_then_follow


def _wrap_optimizers(torch):
    """torch 1.13 has no optimizer step hooks: every Optimizer class's step() is wrapped instead,
    those defined later too (Optimizer.__init__ calls _hook_for_profile, as torch's own wrapping
    does)."""
    global _optimizers_wrapped
    if _optimizers_wrapped:
        return
    optimizer = torch.optim.Optimizer
    pending = [optimizer]
    while pending:
        cls = pending.pop()
        _wrap_optimizer_step(cls)
        pending.extend(cls.__subclasses__())
    torch_hook = optimizer._hook_for_profile

    @functools.wraps(torch_hook)
    def hook_for_profile(self):
        torch_hook(self)
        _wrap_optimizer_step(type(self))

    optimizer._hook_for_profile = hook_for_profile
    _optimizers_wrapped = True


def _torch_step_wrapper_code(torch):
    """The code object of the wrapper torch 2.x puts around every Optimizer class's step() (the one
    that calls the post hooks), or None if torch has no such wrapper."""
    try:
        return torch.optim.Optimizer.profile_hook_step(lambda *args, **kwargs: None).__code__
    except Exception:  # noqa: BLE001 - another torch: every post hook call then counts as a step
        return None


def _optimizer_step_post_hook(optimizer, args, kwargs):
    # A subclass's step() calling its base's runs torch's wrapper, and so the post hooks, twice:
    # only the outermost call ends a training step. Counting the wrapper's frames on the stack
    # holds no state, so a step() that raised cannot leave a count behind.
    if not _follow_optimizer:
        return
    wrappers = 0
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is _step_wrapper_code:
            wrappers += 1
        frame = frame.f_back
    if wrappers <= 1:
        _after_optimizer_step()


def _register_post_hook():
    """torch 2.x's register_optimizer_step_post_hook, or None (torch 1.13)."""
    # torch 2.x's torch.optim deletes its submodules' names: the module is asked for by its own.
    return getattr(importlib.import_module("torch.optim.optimizer"), "register_optimizer_step_post_hook", None)


def _has_step_hooks():
    return _register_post_hook() is not None


def _follow_optimizer_steps(torch):
    global _post_hook, _step_wrapper_code
    register = _register_post_hook()
    if register is None:
        _wrap_optimizers(torch)  # torch 1.13
    elif _post_hook is None:
        _step_wrapper_code = _torch_step_wrapper_code(torch)
        _post_hook = register(_optimizer_step_post_hook)


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


def _load_ops(required):
    """livemon._torch_ops for the running torch; built first if `required` and not built yet.
    Without `required`, None when it is not there already."""
    try:
        return _builder.load(build_if_needed=required)
    except ImportError as error:
        if required:
            raise ImportError(f"livemon.torch_bridge.install(ops=True) needs livemon's operator observer "
                              f"(livemon._torch_ops) built for this torch: {error}") from error
        return None


def install(ops=False, ops_sample=1, steps=True, wait_counters=None):
    """Registers a torch.monitor event handler that forwards every event into livemon.log_event.

    With ``ops=True``, PyTorch's operators are timed as livemon ranges, one call in ``ops_sample``
    (an int >= 1), by livemon._torch_ops, which is compiled for the running torch the first time
    (see livemon.torch_ops). With ``steps`` (the default), livemon's step advances with every
    ``optimizer.step()`` (on torch 2.x through its optimizer step post hook: ``install()`` alone
    needs no native code). ``wait_counters`` (default: as ``ops``) records torch's own
    c10::monitor wait counters first used from then on into livemon WaitCounters; torch 1.13 has
    none, so there it does nothing. Calling it again keeps what is installed and adds what is
    asked for (a new ``ops_sample`` replaces the old one). Returns the torch.monitor handle.
    """
    global _handle, _exit_hook_registered, _ops, _enabled_range_stats, _follow_optimizer
    import torch  # imported here: `import livemon` must not need torch
    import torch.monitor

    if isinstance(ops_sample, bool) or not isinstance(ops_sample, int) or ops_sample < 1:
        raise ValueError(f"ops_sample must be an int of at least 1, got {ops_sample!r}")
    if wait_counters is None:
        wait_counters = ops
    with _lock:
        needs_native = bool(ops or wait_counters)
        # torch 1.13 has no step hooks: its steps are best seen by the native observer, if it is there.
        native_steps = steps and not _has_step_hooks()
        native = _load_ops(required=needs_native) if (needs_native or native_steps) else None
        if native is not None:
            if ops:
                if not _livemon.range_stats_enabled():
                    _livemon.set_range_stats_enabled(True)
                    _enabled_range_stats = True
                native.install_ops(ops_sample)
            if native_steps:
                native.install_steps()
            if wait_counters:
                native.install_wait_counters()
            _ops = native
        if steps:
            _follow_optimizer_steps(torch)
            _follow_optimizer = True
        if _handle is None:
            _handle = torch.monitor.register_event_handler(_forward)
        if not _exit_hook_registered:
            # torch.monitor 1.13 destroys its handler list after the interpreter is gone, and
            # hangs there releasing a Python handler: remove ours while Python still runs. The
            # operator observer goes too, before livemon's range Stats are flushed at exit.
            atexit.register(uninstall)
            _exit_hook_registered = True
        return _handle


def uninstall():
    """Removes what install() registered. Returns False if nothing was installed."""
    global _handle, _ops, _enabled_range_stats, _follow_optimizer, _post_hook
    import torch.monitor

    with _lock:
        removed = _follow_optimizer
        _follow_optimizer = False
        if _post_hook is not None:
            _post_hook.remove()
            _post_hook = None
        if _ops is not None:
            removed = _ops.uninstall_ops() | _ops.uninstall_steps() | _ops.uninstall_wait_counters() | removed
            _ops = None
            if _enabled_range_stats:
                _livemon.set_range_stats_enabled(False)
                _enabled_range_stats = False
        if _handle is None:
            return removed
        # torch.monitor crashes when a handle is unregistered twice; this one is forgotten first.
        handle, _handle = _handle, None
        torch.monitor.unregister_event_handler(handle)
        return True


def installed():
    """Whether the bridge is installed."""
    return _handle is not None


def ops_installed():
    """Whether PyTorch's operators are being timed (install(ops=True))."""
    return _ops is not None and _ops.ops_installed()


def wait_counters_installed():
    """Whether torch's own wait counters are being recorded into livemon WaitCounters."""
    return _ops is not None and _ops.wait_counters_installed()


def follows_optimizer():
    """Whether livemon's step (and a running profile without explicit step() calls) advances with
    optimizer.step()."""
    return _follow_optimizer


def timed_op_count():
    """Operator calls timed so far (only sampled calls, and only while range Stats or a trace are on)."""
    native = _builder.loaded()
    return native.timed_call_count() if native is not None else 0


def forwarded_count():
    """Events forwarded so far."""
    return _forwarded


def error_count():
    """Events that could not be forwarded (they are counted, never raised into torch.monitor)."""
    return _errors
