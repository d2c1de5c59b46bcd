// Fuzzes the recording reader and what `livemonctl info` and `export` do with what it reads.
// Input: a whole MCAP file, read from a memory file (memfd) so nothing touches the disk.
// Properties beyond "no crash, no undefined behaviour, no leak": only RecordingError escapes the
// reader; every offset it reports is inside the file; no file descriptor stays open; a time range
// query delivers only messages inside the range; the commands finish with a documented exit code;
// a file cut short while a reader has it open is reported, not a crash (SIGBUS).
#include <dirent.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <ostream>
#include <string>
#include <vector>

#include <livemon/transport/recording.h>
#include <livemon/transport/recorded_event.h>
#include <livemonctl/export.h>
#include <livemonctl/info.h>

#include "fuzz_support.h"

namespace {

using namespace livemon::transport;
using namespace livemon::livemonctl;

// The memory file every input is written to; its /proc path is what the reader opens.
class MemoryFile {
 public:
  MemoryFile() : fd_(memfd_create("livemon-fuzz-recording", MFD_CLOEXEC)) {
    if (fd_ < 0) livemon::fuzz::fail("memfd_create", __FILE__, __LINE__);
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemoryFile() { close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  void assign(const uint8_t* data, std::size_t size) {
    if (ftruncate(fd_, 0) != 0) livemon::fuzz::fail("ftruncate", __FILE__, __LINE__);
    for (std::size_t done = 0; done < size;) {
      const ssize_t n = pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) livemon::fuzz::fail("pwrite", __FILE__, __LINE__);
      done += static_cast<std::size_t>(n);
    }
  }
  void truncate(std::size_t size) {
    if (ftruncate(fd_, static_cast<off_t>(size)) != 0) livemon::fuzz::fail("ftruncate", __FILE__, __LINE__);
  }
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

int openFileDescriptors() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) livemon::fuzz::fail("opendir /proc/self/fd", __FILE__, __LINE__);
  int count = 0;
  while (readdir(dir) != nullptr) ++count;
  closedir(dir);
  return count;
}

// Reads every message, decodes it as livemonctl does, then asks for the middle of the time span
// and checks only messages inside it come back.
void readAll(const std::string& path, uint64_t fileSize) {
  std::unique_ptr<RecordingReader> reader;
  try {
    reader = std::make_unique<RecordingReader>(path, [](uint64_t done, uint64_t total) {
      LIVEMON_FUZZ_CHECK(done <= total);
    });
  } catch (const RecordingError& error) {
    LIVEMON_FUZZ_CHECK(!error.reason().empty());
    LIVEMON_FUZZ_CHECK(error.offset().value_or(0) <= fileSize);
    return;
  }
  const RecordingSummary& summary = reader->summary();
  RecordedEventDecoder decoder(path);
  ReceivedEvent event;
  std::vector<ReceivedEvent> batch;
  const WireLimits limits;
  uint64_t earliest = UINT64_MAX;
  uint64_t latest = 0;
  reader->forEachMessage([&](const RecordedMessage& message) {
    LIVEMON_FUZZ_CHECK(message.channel != nullptr);
    earliest = std::min(earliest, message.logTimeNs);
    latest = std::max(latest, message.logTimeNs);
    // A batch (format version 2) splits into at most the wire format's events per message, each
    // of the channel's name, numbered on from the message's sequence number.
    std::string error;
    if (decoder.decode(message, batch, &error)) {
      LIVEMON_FUZZ_CHECK(!batch.empty() && batch.size() <= limits.maxEventsPerMessage);
      for (std::size_t i = 0; i < batch.size(); ++i) {
        LIVEMON_FUZZ_CHECK(batch[i].source != nullptr && batch[i].source == batch.front().source);
        LIVEMON_FUZZ_CHECK(batch[i].event.name == message.channel->topic);
        LIVEMON_FUZZ_CHECK(batch[i].sequence == batch.front().sequence + i);
      }
    } else {
      LIVEMON_FUZZ_CHECK(!error.empty() && batch.empty());
    }
    // The single-event decode agrees: it takes exactly the one-event messages.
    std::string singleError;
    const bool single = decoder.decode(message, event, &singleError);
    LIVEMON_FUZZ_CHECK(single == (error.empty() && batch.size() == 1));
    if (single) LIVEMON_FUZZ_CHECK(event.source != nullptr && event.event.name == message.channel->topic);
    return true;
  });

  for (const RecordingProblem& problem : reader->problems()) LIVEMON_FUZZ_CHECK(problem.offset <= fileSize);

  const uint64_t low = std::min(earliest, summary.startTimeNs);
  const uint64_t high = std::max(latest, summary.endTimeNs);
  if (low > high) return;
  const uint64_t from = low + (high - low) / 4;
  const uint64_t to = high - (high - low) / 4;
  uint64_t calls = 0;
  reader->forEachMessage(
      from, to,
      [&](const RecordedMessage& message) {
        LIVEMON_FUZZ_CHECK(message.logTimeNs >= from && message.logTimeNs <= to);
        return ++calls < 3;  // and stopping early stops
      },
      [](uint64_t done, uint64_t total) { LIVEMON_FUZZ_CHECK(done <= total); });
  LIVEMON_FUZZ_CHECK(calls <= 3);
  for (const RecordingProblem& problem : reader->problems()) LIVEMON_FUZZ_CHECK(problem.offset <= fileSize);
}

// Opens the recording, then cuts the file in half before reading it, as a recorder restarted over
// it would.
void readWhileCut(MemoryFile& file, std::size_t size) {
  std::unique_ptr<RecordingReader> reader;
  try {
    reader = std::make_unique<RecordingReader>(file.path());
  } catch (const RecordingError&) {
    return;
  }
  file.truncate(size / 2);
  try {
    reader->forEachMessage([](const RecordedMessage&) { return true; });
  } catch (const RecordingError& error) {
    LIVEMON_FUZZ_CHECK(!error.reason().empty());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static MemoryFile file;
  static livemon::fuzz::NullBuffer discard;
  static std::ostream null(&discard);
  static const std::atomic<bool> keepGoing{false};
  file.assign(data, size);
  const int descriptors = openFileDescriptors();

  readAll(file.path(), size);

  for (bool json : {false, true}) {
    const int code = runInfo({.path = file.path(), .json = json}, null, null);
    LIVEMON_FUZZ_CHECK(code == 0 || code == 1);
  }
  const int jsonLines = runExport({.path = file.path(), .format = ExportFormat::JsonLines}, keepGoing, null, null);
  LIVEMON_FUZZ_CHECK(jsonLines == 0 || jsonLines == 1);
  // A bound relative to the recording's start: 2 when the start leaves no room for it.
  const int csv = runExport({.path = file.path(), .format = ExportFormat::Csv, .from = "0.001"}, keepGoing, null, null);
  LIVEMON_FUZZ_CHECK(csv == 0 || csv == 1 || csv == 2);

  readWhileCut(file, size);  // last: it changes the file
  LIVEMON_FUZZ_CHECK(openFileDescriptors() == descriptors);
  return 0;
}
