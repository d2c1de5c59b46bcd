// Publisher and TensorboardEventHandler: livemon's transport for Python.
#include "py_transport.h"

#include <pybind11/stl.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <livemon/transport/error.h>
#include <livemon/transport/publisher.h>
#include <livemon/transport/tensorboard_writer.h>

#include "py_convert.h"

namespace livemon::python {
namespace {

using transport::Publisher;
using transport::PublisherOptions;
using transport::PublisherStats;
using transport::TensorboardWriter;

std::vector<std::string> endpointList(const py::object& value, const char* what) {
  if (value.is_none()) return {};
  if (PyUnicode_Check(value.ptr())) return {value.cast<std::string>()};
  try {
    return value.cast<std::vector<std::string>>();
  } catch (const py::cast_error&) {
    throw py::type_error(std::string(what) + " must be a str or a list of str, got " +
                         py::repr(value).cast<std::string>());
  }
}

py::dict identityDict(const transport::SourceInfo& source) {
  py::dict result;
  result["run"] = source.run;
  result["host"] = source.host;
  result["pid"] = source.pid;
  auto optional = [](const std::optional<int64_t>& value) {
    return value ? py::object(py::int_(*value)) : py::object(py::none());
  };
  result["rank"] = optional(source.rank);
  result["world_size"] = optional(source.worldSize);
  result["local_rank"] = optional(source.localRank);
  result["instance_id"] = source.instanceId;
  return result;
}

py::dict statsDict(const PublisherStats& stats) {
  py::dict result;
  result["published"] = stats.published;
  result["dropped_queue_full"] = stats.droppedQueueFull;
  result["dropped_too_large"] = stats.droppedTooLarge;
  result["messages"] = stats.messages;
  result["heartbeats"] = stats.heartbeats;
  result["io_wakeups"] = stats.ioWakeups;
  result["queued_bytes"] = stats.queuedBytes;
  result["subscribers_disconnected"] = stats.subscribersDisconnected;
  result["history_bytes"] = stats.historyBytes;
  result["history_messages"] = stats.historyMessages;
  result["history_dropped"] = stats.historyDropped;
  result["history_configs"] = stats.historyConfigs;
  result["history_requests"] = stats.historyRequests;
  result["curve_refused"] = stats.curveRefused;
  result["metrics_dropped"] = stats.metricsDropped;
  result["metrics_unavailable"] = stats.metricsUnavailable;
  return result;
}

// What a default run name starts with: the script's name ("train" for train.py, the package's
// for `python -m package`), as the program's would be "python3"; "python" for -c and the prompt.
std::string scriptName() {
  const py::object sys = py::module_::import("sys");
  const py::list argv = sys.attr("argv");
  const std::string first = argv.empty() ? std::string() : py::str(argv[0]).cast<std::string>();
  if (first.empty() || first == "-c" || first == "-") return "python";
  const py::object path = py::module_::import("os.path");
  py::object stem = path.attr("splitext")(path.attr("basename")(first))[py::int_(0)];
  if (py::str(stem).cast<std::string>() == "__main__") {
    stem = path.attr("basename")(path.attr("dirname")(path.attr("abspath")(first)));
  }
  return py::str(stem).cast<std::string>();
}

// Thread-safe as far as the GIL serialises its calls; the Publisher itself is thread-safe.
//
// Python's face of a transport::Publisher.
class PyPublisher {
 public:
  PyPublisher(const py::object& endpoint, const py::object& connect, const std::string& run,
              std::optional<int64_t> rank, std::optional<int64_t> worldSize, std::optional<int64_t> localRank,
              std::size_t queueCapacityBytes, const py::object& linger,
              const py::object& heartbeatInterval, const std::string& statName, uint16_t metricsPort,
              const std::string& metricsAddress, std::optional<double> historyMb, bool systemStats,
              const std::optional<std::string>& curveSecret, const std::optional<std::string>& curveAllow,
              const std::optional<std::string>& curveServer, std::optional<bool> requireCurve) {
    PublisherOptions options;  // its endpoints follow LIVEMON_CONNECT unless given here
    if (!endpoint.is_none()) options.bind = endpointList(endpoint, "endpoint");
    if (!connect.is_none()) options.connect = endpointList(connect, "connect");
    options.runName = run.empty() ? transport::defaultRunName(scriptName(), rank) : run;
    options.rank = rank;
    options.worldSize = worldSize;
    options.localRank = localRank;
    options.queueCapacityBytes = queueCapacityBytes;
    options.linger = std::chrono::duration_cast<std::chrono::milliseconds>(fromTimedelta(linger, "linger"));
    options.heartbeatInterval =
        std::chrono::duration_cast<std::chrono::milliseconds>(fromTimedelta(heartbeatInterval, "heartbeat_interval"));
    options.statName = statName;
    options.metricsPort = metricsPort;
    options.metricsAddress = metricsAddress;
    if (historyMb) {
      if (!(*historyMb >= 0.0 && *historyMb <= 1024.0 * 1024.0)) {
        throw py::value_error("Publisher: history_mb must be 0..1048576 (0 turns history off), got " +
                              std::to_string(*historyMb));
      }
      options.historyBytes = static_cast<std::size_t>(*historyMb * 1024.0 * 1024.0);
    }
    options.systemStats = systemStats;
    // None keeps what the environment gave (LIVEMON_CURVE_*), as for the endpoints.
    if (curveSecret) options.curve.certificate = *curveSecret;
    if (curveAllow) options.curve.allow = *curveAllow;
    if (curveServer) options.curve.serverCertificate = *curveServer;
    if (requireCurve) options.curve.require = *requireCurve;
    publisher_ = std::make_unique<Publisher>(std::move(options));
    endpoints_ = publisher_->endpoints();
    identity_ = publisher_->identity();
    metricsPort_ = publisher_->metricsPort();
    historyEndpoint_ = publisher_->historyEndpoint();
  }
  ~PyPublisher() { close(); }
  PyPublisher(const PyPublisher&) = delete;
  PyPublisher& operator=(const PyPublisher&) = delete;

  void close() {
    if (!publisher_) return;
    final_ = publisher_->stats();
    metricsPort_ = 0;
    destroyWithoutGil(publisher_);
  }

  bool closed() const { return !publisher_; }
  PublisherStats stats() const { return publisher_ ? publisher_->stats() : final_; }
  const std::vector<std::string>& endpoints() const { return endpoints_; }
  const transport::SourceInfo& identity() const { return identity_; }
  const std::string& historyEndpoint() const { return historyEndpoint_; }
  uint16_t metricsPort() const { return metricsPort_; }

 private:
  std::unique_ptr<Publisher> publisher_;
  std::vector<std::string> endpoints_;
  transport::SourceInfo identity_;
  uint16_t metricsPort_ = 0;
  std::string historyEndpoint_;
  PublisherStats final_;
};

// Writers handed to register_event_handler, flushed when the process exits: a registration keeps
// its writer alive, so nothing else would write out its last second.
std::mutex g_registeredWritersMutex;
std::vector<std::weak_ptr<TensorboardWriter>>* g_registeredWriters = nullptr;  // never destroyed

void flushRegisteredWriters() {
  std::lock_guard lock(g_registeredWritersMutex);
  for (const auto& weak : *g_registeredWriters) {
    if (auto writer = weak.lock()) {
      try {
        writer->flush();
      } catch (const std::exception& error) {
        std::fprintf(stderr, "livemon: flushing %s at exit failed: %s\n", writer->path().c_str(), error.what());
      }
    }
  }
}

void rememberRegisteredWriter(const std::shared_ptr<TensorboardWriter>& writer) {
  std::lock_guard lock(g_registeredWritersMutex);
  if (g_registeredWriters == nullptr) {
    g_registeredWriters = new std::vector<std::weak_ptr<TensorboardWriter>>();
    // After Python is finalized: Stats destroyed during finalization are in the file too.
    std::atexit(flushRegisteredWriters);
  }
  std::erase_if(*g_registeredWriters, [](const auto& weak) { return weak.expired(); });
  g_registeredWriters->push_back(writer);
}

// Thread-safe: with a log directory, the C++ writer is; with a SummaryWriter, every call holds
// the GIL (a registered handler is called through Python), which guards the step counts.
//
// Python's face of a TensorboardWriter, or of a SummaryWriter it writes through.
class PyTensorboardHandler {
 public:
  PyTensorboardHandler(const py::object& logDir, bool allEvents, const py::object& flushInterval) {
    const auto interval =
        std::chrono::duration_cast<std::chrono::milliseconds>(fromTimedelta(flushInterval, "flush_interval"));
    if (interval <= std::chrono::milliseconds(0)) {
      throw py::value_error("TensorboardEventHandler: flush_interval must be at least 1 ms, got " +
                            py::repr(flushInterval).cast<std::string>());
    }
    allEvents_ = allEvents;
    // torch.monitor's handler takes a SummaryWriter and writes through it: so does this one, for
    // anything with add_scalar, so that the writer's flush() and close() cover these scalars too.
    if (py::hasattr(logDir, "add_scalar")) {
      summaryWriter_ = logDir;
      return;
    }
    transport::TensorboardWriterOptions options;
    // An object with only get_logdir() (a writer without add_scalar): use its directory.
    const py::object directory =
        py::hasattr(logDir, "get_logdir") ? logDir.attr("get_logdir")() : py::object(logDir);
    options.logDir = py::module_::import("os").attr("fspath")(directory).cast<std::string>();
    options.allEvents = allEvents;
    options.flushInterval = interval;
    writer_ = std::make_shared<TensorboardWriter>(std::move(options));
  }

  void call(const py::handle& event) {
    if (py::isinstance<Event>(event)) {
      write(event.cast<const Event&>());
    } else {
      write(eventFromObject(event));  // a torch.monitor.Event
    }
  }

  void flush() {
    if (!writer_) {
      if (py::hasattr(summaryWriter_, "flush")) summaryWriter_.attr("flush")();
      return;
    }
    py::gil_scoped_release release;
    writer_->flush();
  }
  void close() {
    if (!writer_) {
      if (!closed_) flush();  // the SummaryWriter is the caller's: flushed, never closed here
      closed_ = true;
      return;
    }
    py::gil_scoped_release release;
    writer_->close();
  }

  const std::shared_ptr<TensorboardWriter>& writer() const { return writer_; }
  py::object summaryWriter() const { return summaryWriter_ ? summaryWriter_ : py::none(); }

  py::object path() const {
    return writer_ ? py::object(py::str(writer_->path().string())) : py::object(py::none());
  }
  py::object logDir() const {
    if (writer_) return py::str(writer_->path().parent_path().string());
    if (py::hasattr(summaryWriter_, "get_logdir")) return summaryWriter_.attr("get_logdir")();
    return py::none();
  }

  py::dict stats() const {
    py::dict result;
    if (writer_) {
      const transport::TensorboardWriterStats stats = writer_->stats();
      result["records"] = stats.records;
      result["scalars"] = stats.scalars;
      result["dropped_events"] = stats.droppedEvents;
      result["write_errors"] = stats.writeErrors;
      result["last_error"] = stats.lastError;
    } else {
      result["records"] = throughScalars_;  // one add_scalar, one record
      result["scalars"] = throughScalars_;
      result["dropped_events"] = throughDropped_;
      result["write_errors"] = 0;  // add_scalar's exceptions reach the caller (or the handler count)
      result["last_error"] = "";
    }
    return result;
  }

 private:
  void write(const Event& event) {
    if (writer_) {
      writer_->write(event);
    } else {
      writeThrough(event);
    }
  }

  // One add_scalar per number of the event, tagged and timed as the C++ writer does; step is the
  // event's own step when it states one, else the count of that tag's earlier points.
  void writeThrough(const Event& event) {
    if (closed_) {
      ++throughDropped_;
      return;
    }
    const bool isStat = event.name == kStatEventName || event.name == kTorchStatEventName;
    if (!isStat && !allEvents_) return;
    std::vector<std::pair<std::string, double>> values;
    for (const auto& [key, value] : event.data) {
      if (const auto* number = std::get_if<double>(&value)) {
        values.emplace_back(key, *number);
      } else if (const auto* integer = std::get_if<int64_t>(&value)) {
        values.emplace_back(key, static_cast<double>(*integer));
      } else if (const auto* flag = std::get_if<bool>(&value)) {
        values.emplace_back(key, *flag ? 1.0 : 0.0);
      }
    }
    std::sort(values.begin(), values.end());
    const double wallTime =
        std::chrono::duration<double>(event.timestamp.time_since_epoch()).count();
    const std::optional<int64_t> stated = statedStep(event);
    const py::object addScalar = summaryWriter_.attr("add_scalar");
    for (const auto& [key, value] : values) {
      std::string tag = isStat ? key : event.name + "/" + key;
      int64_t& next = throughSteps_[tag];
      const int64_t step = stated.value_or(next);
      ++next;
      addScalar(tag, value, py::arg("global_step") = step, py::arg("walltime") = wallTime);
      ++throughScalars_;
    }
  }

  bool allEvents_ = false;
  std::shared_ptr<TensorboardWriter> writer_;  // with a log directory
  py::object summaryWriter_;                   // or the SummaryWriter written through
  std::unordered_map<std::string, int64_t> throughSteps_;  // next step per tag (SummaryWriter)
  uint64_t throughScalars_ = 0;
  uint64_t throughDropped_ = 0;
  bool closed_ = false;
};

}  // namespace

std::optional<EventHandler> nativeHandlerFor(py::handle object) {
  if (!py::isinstance<PyTensorboardHandler>(object)) return std::nullopt;
  std::shared_ptr<TensorboardWriter> writer = object.cast<const PyTensorboardHandler&>().writer();
  if (!writer) return std::nullopt;  // it writes through a SummaryWriter: a Python handler, called with the GIL
  rememberRegisteredWriter(writer);
  // The registration keeps the writer: `register_event_handler(TensorboardEventHandler(dir))`
  // keeps writing although the Python object is gone, as with torch.monitor.
  return EventHandler([writer = std::move(writer)](const Event& event) { writer->write(event); });
}

void bindTransport(py::module_& m) {
  py::register_exception<transport::TransportError>(m, "TransportError", PyExc_OSError);
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const std::system_error& error) {
      // OSError(errno, message) becomes the matching subclass (FileExistsError, PermissionError...).
      PyObject* exception = PyObject_CallFunction(PyExc_OSError, "is", error.code().value(), error.what());
      if (exception != nullptr) {
        PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exception)), exception);
        Py_DECREF(exception);
      }
    }
  });

  using namespace std::chrono_literals;
  const PublisherOptions defaults;
  py::class_<PyPublisher>(m, "Publisher", R"doc(
        Publishes every event of this process over ZeroMQ to the dashboard and ``livemonctl tail``
        while it is open. Logging never waits for the network: events are queued and sent by a
        thread of the publisher; when the queue is full they are dropped and counted.

        Keep it referenced (or use ``with``): closing it, or losing the last reference, stops it.

        ``endpoint``: where to bind (a str or a list; default ``tcp://127.0.0.1:5555``, loopback
        only; port ``*`` picks a free one, see ``endpoints``). ``connect``: endpoints to connect to
        (a relay's ``--listen``). Both default to the environment: with ``LIVEMON_CONNECT=EP[,EP]``
        set, the publisher binds nothing and connects there, so a job started by torchrun joins
        the cluster's relay unchanged. ``run``: the run name the dashboard shows (default: the
        LIVEMON_RUN environment variable, else the script's name and the time the process's
        first publisher started, ``train-20261127-224501``; under torchrun or Slurm, the ranks
        share the launcher's job id instead of the time).
        ``rank``, ``world_size``, ``local_rank``: the process's rank, the number of ranks and its
        rank on its node (default: the RANK, WORLD_SIZE and LOCAL_RANK environment variables, as
        torchrun sets them; ValueError for a rank or local rank outside 0..world_size-1).
        ``metrics_port``: also serve this job's Stats for Prometheus at
        ``http://metrics_address:metrics_port/metrics`` (default 0: the LIVEMON_METRICS_PORT
        environment variable, else off); updated by the publisher's thread, not the training loop.
        ``history_mb``: the history kept for subscribers that join late (``livemonctl tail
        --history``, the dashboard), in MiB (default: LIVEMON_HISTORY_MB, else 32; 0 turns it off;
        a publisher that connects to a relay keeps none). ``history_endpoint`` tells where it is
        answered.
        ``system_stats``: also publish, every second, what the machine is doing as ``system.*``
        Stats: the process's CPU % and RSS, the host's memory used and, with NVML, each GPU's
        utilization, memory, temperature and power (default False; LIVEMON_SYSTEM_STATS=1 turns
        it on too). One sampler thread per process, however many publishers ask for it.
        ``curve_secret``, ``curve_allow``: encrypt and authenticate with CURVE: this side's
        ``NAME.key_secret`` (``livemonctl keygen``) and the directory of the ``NAME.key`` files of
        the subscribers allowed in; ``curve_server``: connecting to a relay, the relay's
        ``NAME.key``; ``require_curve``: refuse to bind beyond loopback without CURVE. Default:
        LIVEMON_CURVE_SECRET, LIVEMON_CURVE_ALLOW, LIVEMON_CURVE_SERVER, LIVEMON_REQUIRE_CURVE.
        ``stats()["curve_refused"]`` counts subscribers refused. A ``metrics_port`` that another
        process holds does not stop the job: ``metrics_port`` reads 0 and
        ``stats()["metrics_unavailable"]`` is True.
      )doc")
      .def(py::init<const py::object&, const py::object&, const std::string&, std::optional<int64_t>,
                    std::optional<int64_t>, std::optional<int64_t>, std::size_t,
                    const py::object&, const py::object&, const std::string&, uint16_t, const std::string&,
                    std::optional<double>, bool, const std::optional<std::string>&,
                    const std::optional<std::string>&, const std::optional<std::string>&, std::optional<bool>>(),
           py::arg("endpoint") = py::none(), py::kw_only(),
           py::arg("connect") = py::none(), py::arg("run") = "", py::arg("rank") = py::none(),
           py::arg("world_size") = py::none(), py::arg("local_rank") = py::none(),
           py::arg("queue_capacity_bytes") = defaults.queueCapacityBytes,
           py::arg("linger") = toTimedelta(defaults.linger),
           py::arg("heartbeat_interval") = toTimedelta(defaults.heartbeatInterval),
           py::arg("stat_name") = defaults.statName, py::arg("metrics_port") = defaults.metricsPort,
           py::arg("metrics_address") = defaults.metricsAddress, py::arg("history_mb") = py::none(),
           py::arg("system_stats") = defaults.systemStats, py::arg("curve_secret") = py::none(),
           py::arg("curve_allow") = py::none(), py::arg("curve_server") = py::none(),
           py::arg("require_curve") = py::none())
      .def("close", &PyPublisher::close,
           "Sends what is queued and a goodbye (waiting at most `linger`), then stops. A second call does nothing.")
      .def("__enter__", [](PyPublisher& self) -> PyPublisher& { return self; }, py::return_value_policy::reference)
      .def("__exit__", [](PyPublisher& self, const py::args&) {
        self.close();
        return false;
      })
      .def_property_readonly("closed", &PyPublisher::closed)
      .def_property_readonly("endpoints", &PyPublisher::endpoints,
                             "The endpoints in use; a bound port * appears as the port chosen.")
      .def_property_readonly("identity", [](const PyPublisher& self) { return identityDict(self.identity()); })
      .def_property_readonly("history_endpoint", &PyPublisher::historyEndpoint,
                             "Where history requests are answered, or '' when the publisher keeps no history.")
      .def_property_readonly("metrics_port", &PyPublisher::metricsPort,
                             "The port the Stats are served on for Prometheus, or 0 when off.")
      .def_property_readonly("published_count", [](const PyPublisher& self) { return self.stats().published; })
      .def_property_readonly("dropped_count",
                             [](const PyPublisher& self) {
                               const PublisherStats stats = self.stats();
                               return stats.droppedQueueFull + stats.droppedTooLarge;
                             })
      .def("stats", [](const PyPublisher& self) { return statsDict(self.stats()); })
      .def("__repr__", [](const PyPublisher& self) {
        std::string endpoints;
        for (const std::string& endpoint : self.endpoints()) endpoints += (endpoints.empty() ? "" : ", ") + endpoint;
        return "<livemon.Publisher " + self.identity().run + " on " + endpoints + (self.closed() ? " (closed)>" : ">");
      });

  py::class_<PyTensorboardHandler>(m, "TensorboardEventHandler", R"doc(
        Writes Stat events (``livemon.Stat`` and ``torch.monitor.Stat``) as TensorBoard scalars:
        each Stat key is a tag, wall_time is the window's time. Other events are ignored unless
        ``all_events=True`` (their numbers and bools become tags ``"<name>/<key>"``).

        ``TensorboardEventHandler(log_dir)``: livemon's own writer (no TensorBoard needed) writes
        an ``events.out.tfevents.<time>.<host>`` file into ``log_dir``; step counts each tag's
        windows from 0. Records reach the file every ``flush_interval``, on ``flush()`` and
        ``close()``. Registered with ``register_event_handler`` it writes from C++, without the
        GIL, and keeps writing although the Python object is gone, as torch.monitor's does.

        ``TensorboardEventHandler(writer)``, with a ``torch.utils.tensorboard.SummaryWriter`` (or
        anything with its ``add_scalar(tag, value, global_step=, walltime=)``), as in
        torch.monitor: every scalar goes through ``writer.add_scalar``, so ``writer.flush()`` and
        ``writer.close()`` cover them. The step is the event's (``Event.stated_step``: set with
        ``set_step``, or an int ``"step"`` field) when it has one, else the count of that tag's
        earlier points (torch.monitor's handler writes every point at step 0). Called with the
        GIL; ``flush_interval`` does not apply (the writer has its own). ``close()`` flushes the
        writer and stops writing through it, but leaves the writer open: it is the caller's.
        An object with only ``get_logdir()`` is taken for its directory.

        It also takes torch.monitor's events when called, so torch.monitor can use it too.
      )doc")
      .def(py::init<const py::object&, bool, const py::object&>(), py::arg("log_dir"), py::kw_only(),
           py::arg("all_events") = false, py::arg("flush_interval") = toTimedelta(1s))
      .def("__call__", &PyTensorboardHandler::call, py::arg("event"))
      .def("flush", &PyTensorboardHandler::flush,
           "Writes everything recorded so far to the file (or flushes the SummaryWriter).")
      .def("close", &PyTensorboardHandler::close,
           "Flushes and closes the file (a SummaryWriter: flushes it and stops writing through it); later events "
           "are dropped. A second call does nothing.")
      .def("__enter__", [](PyTensorboardHandler& self) -> PyTensorboardHandler& { return self; },
           py::return_value_policy::reference)
      .def("__exit__", [](PyTensorboardHandler& self, const py::args&) {
        self.close();
        return false;
      })
      .def_property_readonly("path", &PyTensorboardHandler::path,
                             "The file written, or None when writing through a SummaryWriter.")
      .def_property_readonly("log_dir", &PyTensorboardHandler::logDir,
                             "The directory written to (a SummaryWriter's get_logdir(), or None without one).")
      .def_property_readonly("writer", &PyTensorboardHandler::summaryWriter,
                             "The SummaryWriter written through, or None with a log directory.")
      .def("stats", &PyTensorboardHandler::stats,
           "{'records', 'scalars', 'dropped_events', 'write_errors', 'last_error'}.");
}

}  // namespace livemon::python
