#include <livemon/transport/tensorboard_writer.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <livemon/detail/fork_hooks.h>
#include <livemon/transport/error.h>

#include "crc32c.h"

namespace livemon::transport {
namespace {

// The protocol buffer encoding of the few fields written here (tensorflow/core/util/event.proto
// and tensorflow/core/framework/summary.proto). Each field starts with a key: field number << 3 |
// wire type.
enum WireType : uint8_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// Event
constexpr uint32_t kEventWallTime = 1;     // double
constexpr uint32_t kEventStep = 2;         // int64
constexpr uint32_t kEventFileVersion = 3;  // string
constexpr uint32_t kEventSummary = 5;      // Summary
// Summary
constexpr uint32_t kSummaryValue = 1;  // repeated Summary.Value
// Summary.Value
constexpr uint32_t kValueTag = 1;          // string
constexpr uint32_t kValueSimpleValue = 2;  // float

constexpr std::string_view kFileVersion = "brain.Event:2";

void putVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void putKey(std::string& out, uint32_t field, WireType type) { putVarint(out, (uint64_t{field} << 3) | type); }

template <typename Unsigned>
void putLittleEndian(std::string& out, Unsigned value) {
  for (std::size_t i = 0; i < sizeof(Unsigned); ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

void putBytes(std::string& out, uint32_t field, std::string_view bytes) {
  putKey(out, field, kLengthDelimited);
  putVarint(out, bytes.size());
  out.append(bytes);
}

void putEventHeader(std::string& out, double wallTime, int64_t step) {
  putKey(out, kEventWallTime, kFixed64);
  putLittleEndian(out, std::bit_cast<uint64_t>(wallTime));
  if (step != 0) {  // proto3 leaves a zero out
    putKey(out, kEventStep, kVarint);
    putVarint(out, static_cast<uint64_t>(step));
  }
}

std::string encodeFileVersionEvent(double wallTime) {
  std::string event;
  putEventHeader(event, wallTime, 0);
  putBytes(event, kEventFileVersion, kFileVersion);
  return event;
}

std::string encodeScalarEvent(double wallTime, int64_t step, std::string_view tag, float value) {
  std::string summaryValue;
  putBytes(summaryValue, kValueTag, tag);
  putKey(summaryValue, kValueSimpleValue, kFixed32);
  putLittleEndian(summaryValue, std::bit_cast<uint32_t>(value));
  std::string summary;
  putBytes(summary, kSummaryValue, summaryValue);
  std::string event;
  putEventHeader(event, wallTime, step);
  putBytes(event, kEventSummary, summary);
  return event;
}

double wallSeconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

std::string hostName() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof(buffer) - 1) != 0 || buffer[0] == '\0') return "localhost";
  return buffer;
}

// The scalar a data value contributes, if any.
bool scalarOf(const DataValue& value, float& out) {
  if (const auto* d = std::get_if<double>(&value)) {
    out = static_cast<float>(*d);
  } else if (const auto* i = std::get_if<int64_t>(&value)) {
    out = static_cast<float>(*i);
  } else if (const auto* b = std::get_if<bool>(&value)) {
    out = *b ? 1.0f : 0.0f;
  } else {
    return false;
  }
  return true;
}

// Opens a new file in `dir` named after the time and host; if that name is taken, with
// ".<pid>.<n>" appended. Throws std::system_error naming the path.
std::FILE* createEventFile(const std::filesystem::path& dir, std::chrono::system_clock::time_point now,
                           std::filesystem::path& chosen) {
  const std::string base = TensorboardWriter::fileName(now, hostName());
  for (int attempt = 0;; ++attempt) {
    std::string name = base;
    if (attempt > 0) {
      name += '.';
      name += std::to_string(getpid());
      name += '.';
      name += std::to_string(attempt);
    }
    chosen = dir / name;
    const int fd = ::open(chosen.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      std::FILE* file = fdopen(fd, "wb");
      if (file == nullptr) {
        const int error = errno;
        ::close(fd);
        throw std::system_error(error, std::generic_category(),
                                "TensorboardWriter: cannot open '" + chosen.string() + "'");
      }
      return file;
    }
    if (errno != EEXIST || attempt >= 1000) {
      throw std::system_error(errno, std::generic_category(),
                              "TensorboardWriter: cannot create '" + chosen.string() + "'");
    }
  }
}

}  // namespace

std::string frameTfRecord(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 16);
  putLittleEndian(out, static_cast<uint64_t>(data.size()));
  putLittleEndian(out, detail::maskCrc32c(detail::crc32c(std::string_view(out.data(), 8))));
  out.append(data);
  putLittleEndian(out, detail::maskCrc32c(detail::crc32c(data)));
  return out;
}

std::string TensorboardWriter::fileName(std::chrono::system_clock::time_point created, const std::string& host) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(created.time_since_epoch()).count();
  char digits[32];
  std::snprintf(digits, sizeof(digits), "%010lld", static_cast<long long>(seconds));
  return std::string("events.out.tfevents.") + digits + "." + host;
}

// Thread-safe: `mutex` guards the records waiting for the writer thread, `ioMutex` the file and
// its counters; the rest is immutable once the writer thread starts.
struct TensorboardWriter::State {
  State(Options opts, uint64_t generation) : options(std::move(opts)), forkGeneration(generation) {}

  void write(const Event& event) noexcept;
  void drain();
  void run();

  const Options options;
  const uint64_t forkGeneration;
  std::filesystem::path path;

  std::mutex mutex;                                // guards the members up to `wake`
  std::string pending;                             // framed records not yet in the file
  uint64_t pendingRecords = 0;
  uint64_t pendingScalars = 0;
  std::unordered_map<std::string, int64_t> steps;  // next step per tag
  bool closed = false;
  bool stop = false;
  uint64_t droppedEvents = 0;
  std::condition_variable wake;

  std::mutex ioMutex;           // serialises writes to the file; guards the members below
  std::FILE* file = nullptr;
  uint64_t records = 0;
  uint64_t scalars = 0;
  uint64_t writeErrors = 0;
  std::string lastError;

  std::thread thread;
};

void TensorboardWriter::State::write(const Event& event) noexcept {
  if (livemon::detail::forkGeneration() != forkGeneration) return;  // the parent's file
  const bool isStat = event.name == kStatEventName || event.name == kTorchStatEventName;
  if (!isStat && !options.allEvents) return;
  try {
    // Keys in order, so the file does not depend on the hash map's iteration order.
    std::vector<std::pair<const std::string*, float>> values;
    values.reserve(event.data.size());
    for (const auto& [key, value] : event.data) {
      float scalar = 0;
      if (scalarOf(value, scalar)) values.emplace_back(&key, scalar);
    }
    if (values.empty()) return;
    std::sort(values.begin(), values.end(), [](const auto& a, const auto& b) { return *a.first < *b.first; });
    const double wallTime = wallSeconds(event.timestamp);

    std::lock_guard lock(mutex);
    if (closed || pending.size() >= options.maxPendingBytes) {
      ++droppedEvents;
      return;
    }
    for (const auto& [key, scalar] : values) {
      std::string tag = isStat ? *key : event.name + "/" + *key;
      int64_t& next = steps[tag];
      pending += frameTfRecord(encodeScalarEvent(wallTime, next, tag, scalar));
      ++next;
      ++pendingRecords;
      ++pendingScalars;
    }
  } catch (const std::bad_alloc&) {
    std::lock_guard lock(mutex);
    ++droppedEvents;
  }
}

void TensorboardWriter::State::drain() {
  std::lock_guard io(ioMutex);
  std::string out;
  uint64_t outRecords = 0;
  uint64_t outScalars = 0;
  {
    std::lock_guard lock(mutex);
    out.swap(pending);
    std::swap(outRecords, pendingRecords);
    std::swap(outScalars, pendingScalars);
  }
  if (file == nullptr) return;
  if (!out.empty() && std::fwrite(out.data(), 1, out.size(), file) != out.size()) {
    ++writeErrors;
    lastError = std::string("write to '") + path.string() + "' failed: " + std::strerror(errno);
    std::clearerr(file);
    return;
  }
  if (std::fflush(file) != 0) {
    ++writeErrors;
    lastError = std::string("flush of '") + path.string() + "' failed: " + std::strerror(errno);
    std::clearerr(file);
    return;
  }
  records += outRecords;
  scalars += outScalars;
}

void TensorboardWriter::State::run() {
  std::unique_lock lock(mutex);
  while (!stop) {
    wake.wait_for(lock, options.flushInterval, [this] { return stop; });
    if (stop) break;
    lock.unlock();
    drain();
    lock.lock();
  }
}

TensorboardWriter::TensorboardWriter(Options options) {
  if (options.logDir.empty()) throw std::invalid_argument("TensorboardWriter: logDir must not be empty");
  if (options.flushInterval <= std::chrono::milliseconds(0)) {
    throw std::invalid_argument("TensorboardWriter: flushInterval must be positive, got " +
                                std::to_string(options.flushInterval.count()) + " ms");
  }
  if (!livemon::detail::countForks()) {
    throw TransportError("", "pthread_atfork failed", "livemon transport: cannot watch for fork()");
  }
  state_ = std::make_shared<State>(std::move(options), livemon::detail::forkGeneration());
  State& state = *state_;
  std::error_code error;
  std::filesystem::create_directories(state.options.logDir, error);
  if (error) {
    throw std::system_error(error, "TensorboardWriter: cannot create the log directory '" +
                                       state.options.logDir.string() + "'");
  }
  const auto now = std::chrono::system_clock::now();
  state.file = createEventFile(state.options.logDir, now, state.path);
  // The file_version record goes out at once, so the file is a valid event file from the start.
  const std::string first = frameTfRecord(encodeFileVersionEvent(wallSeconds(now)));
  if (std::fwrite(first.data(), 1, first.size(), state.file) != first.size() || std::fflush(state.file) != 0) {
    const int code = errno;
    std::fclose(state.file);
    state.file = nullptr;
    throw std::system_error(code, std::generic_category(),
                            "TensorboardWriter: cannot write to '" + state.path.string() + "'");
  }
  state.records = 1;
  try {
    state.thread = std::thread([&state] { state.run(); });
  } catch (...) {
    std::fclose(state.file);
    state.file = nullptr;
    throw;
  }
}

TensorboardWriter::~TensorboardWriter() {
  if (livemon::detail::forkGeneration() != state_->forkGeneration) {
    // Inherited through fork(): the writer thread does not exist here and the file belongs to
    // the parent. Touch none of it: the state stays, reachable, until the process exits.
    static auto* inherited = new std::vector<std::shared_ptr<State>>;
    inherited->push_back(std::move(state_));
    return;
  }
  try {
    close();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "livemon: closing the TensorBoard file %s failed: %s\n", state_->path.c_str(), error.what());
  }
}

void TensorboardWriter::write(const Event& event) noexcept { state_->write(event); }

EventHandler TensorboardWriter::handler() const {
  return [state = state_](const Event& event) { state->write(event); };
}

void TensorboardWriter::flush() {
  if (livemon::detail::forkGeneration() != state_->forkGeneration) return;
  state_->drain();
}

void TensorboardWriter::close() {
  State& state = *state_;
  if (livemon::detail::forkGeneration() != state.forkGeneration) return;
  {
    std::lock_guard lock(state.mutex);
    if (state.closed) return;
    state.closed = true;
    state.stop = true;
  }
  state.wake.notify_all();
  if (state.thread.joinable()) state.thread.join();
  state.drain();
  std::lock_guard io(state.ioMutex);
  if (state.file != nullptr) {
    if (std::fclose(state.file) != 0) {
      ++state.writeErrors;
      state.lastError = std::string("close of '") + state.path.string() + "' failed: " + std::strerror(errno);
    }
    state.file = nullptr;
  }
}

const std::filesystem::path& TensorboardWriter::path() const noexcept { return state_->path; }

TensorboardWriterStats TensorboardWriter::stats() const {
  TensorboardWriterStats stats;
  {
    std::lock_guard lock(state_->mutex);
    stats.droppedEvents = state_->droppedEvents;
  }
  std::lock_guard io(state_->ioMutex);
  stats.records = state_->records;
  stats.scalars = state_->scalars;
  stats.writeErrors = state_->writeErrors;
  stats.lastError = state_->lastError;
  return stats;
}

}  // namespace livemon::transport
