#include "py_handlers.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <livemon/detail/dispatch_step.h>
#include <livemon/detail/fork_hooks.h>
#include <livemon/event_handler.h>

#include "py_convert.h"
#include "py_transport.h"

namespace livemon::python {
namespace {

// Set by the exit hook: from then on no Python handler is called and no Python object is
// released from C++ (the interpreter is about to be finalized; a thread that waits for the GIL
// then is ended by Python, which must never happen inside livemon's noexcept logEvent).
std::atomic<bool> g_shutdown{false};

// The registrations of Python callables, so the exit hook can remove them.
std::mutex g_registrationsMutex;
std::vector<EventHandlerHandle> g_pythonHandles;  // guarded by g_registrationsMutex

// Python objects whose last C++ reference went away on a thread without the GIL (the Stat window
// thread), released later by a thread that holds it.
std::mutex g_deferredMutex;
std::vector<PyObject*> g_deferred;  // guarded by g_deferredMutex
std::atomic<bool> g_drainScheduled{false};

int drainDeferred(void* /*unused*/) {
  std::vector<PyObject*> objects;
  {
    std::lock_guard lock(g_deferredMutex);
    objects.swap(g_deferred);
    g_drainScheduled.store(false);
  }
  for (PyObject* object : objects) Py_DECREF(object);
  return 0;
}

void releaseObject(PyObject* object) noexcept {
  if (g_shutdown.load(std::memory_order_acquire)) return;  // left to the process's exit
  if (PyGILState_Check() != 0) {
    Py_DECREF(object);
    return;
  }
  try {
    std::lock_guard lock(g_deferredMutex);
    g_deferred.push_back(object);
  } catch (const std::bad_alloc&) {
    return;  // leaked rather than released without the GIL
  }
  // Py_AddPendingCall needs no GIL; the main thread runs drainDeferred soon with the GIL held.
  if (!g_drainScheduled.exchange(true) && Py_AddPendingCall(drainDeferred, nullptr) != 0) {
    g_drainScheduled.store(false);  // the queue is full: the next registration drains instead
  }
}

std::string describe(PyObject* object) {
  PyObject* text = PyObject_Str(object);
  if (text == nullptr) {
    PyErr_Clear();
    return "<unprintable>";
  }
  const char* utf8 = PyUnicode_AsUTF8(text);
  std::string result = utf8 != nullptr ? utf8 : "<unprintable>";
  if (utf8 == nullptr) PyErr_Clear();
  Py_DECREF(text);
  return result;
}

// Thread-safe: called from any thread, it takes the GIL for the call (the Stat window thread has
// no Python thread state of its own; PyGILState_Ensure makes one for the call).
//
// A Python callable registered as an event handler.
class PythonHandler {
 public:
  explicit PythonHandler(py::object callable) : callable_(callable.release().ptr()) {}
  ~PythonHandler() { releaseObject(callable_); }
  PythonHandler(const PythonHandler&) = delete;
  PythonHandler& operator=(const PythonHandler&) = delete;

  void operator()(const Event& event) {
    if (g_shutdown.load(std::memory_order_acquire)) return;
    const PyGILState_STATE gil = PyGILState_Ensure();
    std::string failure;
    try {
      // The step logEvent keeps beside the event rather than in it (see dispatchStep) goes into
      // a copy: the event may be the caller's own Python object, which must stay as it was.
      const std::optional<int64_t> step = event.step ? std::nullopt : detail::loggedStep(event);
      py::object pyEvent;
      if (step) {
        Event stamped = event;
        stamped.step = step;
        pyEvent = py::cast(std::move(stamped));
      } else {
        pyEvent = py::cast(event);
      }
      PyObject* result = PyObject_CallOneArg(callable_, pyEvent.ptr());
      if (result != nullptr) {
        Py_DECREF(result);
      } else {
        failure = takeError();
      }
    } catch (py::error_already_set& error) {
      error.restore();
      failure = takeError();
    } catch (const std::exception& error) {
      failure = error.what();
    }
    PyGILState_Release(gil);
    // livemon's logEvent catches this, counts it and goes on with the next handler.
    if (!failure.empty()) throw std::runtime_error(failure);
  }

 private:
  // Clears the pending Python exception and describes it. The first one of this handler is
  // printed with its traceback.
  std::string takeError() {
    PyObject* type = nullptr;
    PyObject* value = nullptr;
    PyObject* traceback = nullptr;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    if (type == nullptr) return "an unknown error";
    std::string text = reinterpret_cast<PyTypeObject*>(type)->tp_name;
    if (value != nullptr) {
      const std::string message = describe(value);
      if (!message.empty()) text += ": " + message;
    }
    text += " (in the Python event handler " + describe(callable_) + ")";
    const bool interrupted = PyErr_GivenExceptionMatches(type, PyExc_KeyboardInterrupt) != 0;
    if (!reported_.exchange(true)) {
      PySys_WriteStderr("livemon: a Python event handler raised (livemon caught it and went on):\n");
      // PyErr_Display, not PyErr_Print: the latter would act on a SystemExit and end the process.
      if (value != nullptr) PyErr_Display(type, value, traceback);
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
    // Ctrl-C must still stop the job: raise it again where Python checks for signals.
    if (interrupted) PyErr_SetInterrupt();
    return text;
  }

  PyObject* const callable_;
  std::atomic<bool> reported_{false};
};

// Thread-safety: a plain value type. The Python face of an EventHandlerHandle; `serial` numbers
// registrations for hashing.
struct HandleBox {
  explicit HandleBox(EventHandlerHandle h) : handle(h), serial(nextSerial()) {}
  static uint64_t nextSerial() {
    static std::atomic<uint64_t> counter{0};
    return ++counter;
  }
  EventHandlerHandle handle;
  uint64_t serial;
};

void shutdownHandlers() {
  g_shutdown.store(true, std::memory_order_release);
  std::vector<EventHandlerHandle> handles;
  {
    std::lock_guard lock(g_registrationsMutex);
    handles.swap(g_pythonHandles);
  }
  {
    // A call in flight may be waiting for the GIL on another thread; let it finish.
    py::gil_scoped_release release;
    for (const EventHandlerHandle& handle : handles) unregisterEventHandler(handle);
  }
  drainDeferred(nullptr);
}

void lockForFork() noexcept {
  g_registrationsMutex.lock();
  g_deferredMutex.lock();
}

void unlockAfterFork() noexcept {
  g_deferredMutex.unlock();
  g_registrationsMutex.unlock();
}

void forgetRegistration(const EventHandlerHandle& handle) {
  std::lock_guard lock(g_registrationsMutex);
  g_pythonHandles.erase(std::remove(g_pythonHandles.begin(), g_pythonHandles.end(), handle), g_pythonHandles.end());
}

HandleBox registerHandler(py::object handler) {
  drainDeferred(nullptr);
  if (std::optional<EventHandler> native = nativeHandlerFor(handler)) {
    return HandleBox(registerEventHandler(std::move(*native)));
  }
  if (PyCallable_Check(handler.ptr()) == 0) {
    throw py::type_error("register_event_handler: handler must be callable, got " +
                         py::str(py::type::handle_of(handler).attr("__name__")).cast<std::string>());
  }
  auto python = std::make_shared<PythonHandler>(std::move(handler));
  const EventHandlerHandle handle =
      registerEventHandler([python = std::move(python)](const Event& event) { (*python)(event); });
  std::lock_guard lock(g_registrationsMutex);
  g_pythonHandles.push_back(handle);
  return HandleBox(handle);
}

bool unregisterHandler(const HandleBox& box) {
  forgetRegistration(box.handle);
  // Waits until the handler runs nowhere, which may need the GIL on another thread.
  py::gil_scoped_release release;
  return unregisterEventHandler(box.handle);
}

}  // namespace

void bindHandlers(py::module_& m) {
  // A fork while another thread holds one of these must not leave it locked in the child.
  detail::registerForkHooks(detail::ForkStage::PythonHandlers, {lockForFork, unlockAfterFork, unlockAfterFork});

  py::class_<HandleBox>(m, "EventHandlerHandle", R"doc(
        Identifies one registration made by ``register_event_handler``; pass it to
        ``unregister_event_handler``.
      )doc")
      .def("__eq__",
           [](const HandleBox& a, const py::object& b) {
             return py::isinstance<HandleBox>(b) && a.handle == b.cast<const HandleBox&>().handle;
           })
      .def("__hash__", [](const HandleBox& box) { return std::hash<uint64_t>{}(box.serial); })
      .def("__repr__", [](const HandleBox& box) {
        return "<livemon.EventHandlerHandle #" + std::to_string(box.serial) + ">";
      });

  const char* registerDoc = R"doc(
        Calls ``callback(event)`` for every event logged from now on, synchronously on the thread
        that logs it (for Stat windows that close on time, livemon's window thread), in
        registration order. An exception raised by the callback is caught, counted
        (``handler_error_count()``) and printed once with its traceback; it never reaches the code
        that logged the event and never stops the Stat. Returns an EventHandlerHandle.

        The callable may be passed by position, as ``callback=`` (torch.monitor's keyword) or as
        ``handler=``. A ``TensorboardEventHandler`` given a log directory is registered directly,
        without calling into Python.
      )doc";
  // One function per accepted keyword: pybind11 picks the one whose name the caller used.
  m.def("register_event_handler", &registerHandler, py::arg("callback"), registerDoc);
  m.def("register_event_handler", &registerHandler, py::arg("handler"));

  const char* unregisterDoc = R"doc(
        Removes a registration: pass the EventHandlerHandle by position, as ``handler=``
        (torch.monitor's keyword) or as ``handle=``. Returns False if it was already removed
        (torch.monitor crashes then). Called outside a handler, it returns once the handler is
        running nowhere; it is never called again.
      )doc";
  m.def("unregister_event_handler", &unregisterHandler, py::arg("handler"), unregisterDoc);
  m.def("unregister_event_handler", &unregisterHandler, py::arg("handle"));

  m.def("handler_error_count", &handlerErrorCount, "Exceptions raised by event handlers since the process started.");
  m.def("last_handler_error", &lastHandlerError, "The message of the most recent exception raised by a handler.");
  m.def("registered_event_handler_count", &registeredEventHandlerCount,
        "Event handlers registered now, livemon's own (a Publisher's) included.");
  m.def("dropped_reentrant_event_count", &droppedReentrantEventCount,
        "Events dropped because handlers logged into themselves more than 16 levels deep.");

  m.def("_shutdown", &shutdownHandlers, R"doc(
        Run at interpreter exit (registered with atexit): unregisters the Python handlers so that
        no livemon thread calls into an interpreter that is being finalized.
      )doc");
  py::module_::import("atexit").attr("register")(m.attr("_shutdown"));
}

}  // namespace livemon::python
