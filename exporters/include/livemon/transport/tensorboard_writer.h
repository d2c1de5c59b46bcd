#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include <livemon/event.h>
#include <livemon/event_handler.h>

namespace livemon::transport {

// Thread-safety: a plain value type.
struct TensorboardWriterOptions {
  // The directory TensorBoard is pointed at (`tensorboard --logdir`); created if missing.
  std::filesystem::path logDir;
  // Stat events (kStatEventName and kTorchStatEventName) always become scalars, one tag per key.
  // With allEvents, every other event's numeric and bool fields do too, tagged "<name>/<key>".
  bool allEvents = false;
  // How often the writer thread moves written records to the file. flush() does it at once.
  std::chrono::milliseconds flushInterval{1000};
  // Encoded records waiting for the writer thread at most; beyond that events are dropped and
  // counted (a stalled disk never stalls the training loop).
  std::size_t maxPendingBytes = 16 * 1024 * 1024;
};

// Thread-safety: a plain value type. Counters of one writer.
struct TensorboardWriterStats {
  uint64_t records = 0;         // Event records written to the file, the file_version record included
  uint64_t scalars = 0;         // scalar values among them
  uint64_t droppedEvents = 0;   // events not written: the pending buffer was full or the writer closed
  uint64_t writeErrors = 0;     // failed writes to the file (the records of that write are lost)
  std::string lastError;        // what the last failed write said
};

// Thread-safe: every member may be called from any thread, and write() (or the handler()) from
// many at once. write() only encodes the event and appends it to a bounded buffer under a mutex;
// a writer thread owns the file and writes the buffer out every flushInterval.
//
// Writes events as TensorBoard scalars into one `events.out.tfevents.<unix time>.<host>` file
// (with ".<pid>.<n>" appended when that name is taken), in TensorBoard's format: TFRecord framing
// (length, masked CRC32C of the length, data, masked CRC32C of the data) around Event protocol
// buffers, the first holding file_version "brain.Event:2", each later one a Summary of
// simple_value scalars.
//
// Each key of a Stat event is a tag ("loss.mean"); wall_time is the event's timestamp and step
// counts that tag's points from 0, so every Stat window is one step.
//
// Fork: a child forked while a writer exists ignores its events and leaves the file to the parent.
class TensorboardWriter {
 public:
  using Options = TensorboardWriterOptions;

  // Creates the directory and the file and writes the file_version record. Throws
  // std::system_error naming the path when either cannot be created, and std::invalid_argument
  // naming the option for an empty logDir or a non-positive flushInterval.
  explicit TensorboardWriter(Options options);
  // close().
  ~TensorboardWriter();

  TensorboardWriter(const TensorboardWriter&) = delete;
  TensorboardWriter& operator=(const TensorboardWriter&) = delete;

  // Records `event` if it is a Stat event (or any event, with allEvents). Never blocks on I/O,
  // never throws; events without a scalar are ignored.
  void write(const Event& event) noexcept;

  // An event handler that calls write(): `registerEventHandler(writer.handler())`. It shares the
  // writer's state, so it stays safe to call after the writer is gone (it then drops events).
  EventHandler handler() const;

  // Writes everything recorded so far to the file and flushes it to the operating system.
  void flush();
  // flush(), then stops the writer thread and closes the file; later events are dropped.
  // A second call does nothing.
  void close();

  const std::filesystem::path& path() const noexcept;
  TensorboardWriterStats stats() const;

  // "events.out.tfevents.<seconds>.<host>", the name TensorBoard looks for.
  static std::string fileName(std::chrono::system_clock::time_point created, const std::string& host);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// The TFRecord frame of one record: little-endian uint64 length, masked CRC32C of those 8 bytes,
// the data, masked CRC32C of the data.
std::string frameTfRecord(std::string_view data);

}  // namespace livemon::transport
