#include <livemonctl/relay_recorder.h>

#include <ctime>
#include <stdexcept>


namespace livemon::livemonctl {

namespace {

// "20261126T080633Z": sorts as the files were started.
std::string utcStamp(std::chrono::system_clock::time_point t) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y%m%dT%H%M%SZ", &utc);
  return text;
}

}  // namespace

RelayRecorder::RelayRecorder(RelayRecorderOptions options)
    : options_(std::move(options)), clock_(options_.clock != nullptr ? *options_.clock : systemClock()) {
  if (options_.dir.empty()) throw std::invalid_argument("the recording directory is empty");
  if (options_.rotateBytes < 1) throw std::invalid_argument("rotate size must be at least 1 byte");
  if (options_.rotateAfter.count() < 1) throw std::invalid_argument("rotate time must be at least 1 ms");
  if (options_.retryAfter.count() < 1) throw std::invalid_argument("retry time must be at least 1 ms");
  std::error_code error;
  std::filesystem::create_directories(options_.dir, error);
  if (error) {
    throw transport::RecordingError(options_.dir.string(), std::nullopt, "cannot create the directory: " + error.message());
  }
  open();
}

RelayRecorder::~RelayRecorder() = default;

void RelayRecorder::open() {
  const std::string stamp = utcStamp(clock_.wallNow());
  std::filesystem::path path = options_.dir / ("relay-" + stamp + ".mcap");
  for (int n = 2; std::filesystem::exists(path); ++n) {
    path = options_.dir / ("relay-" + stamp + "-" + std::to_string(n) + ".mcap");
  }
  // Exclusive: a file that appeared since the check (another relay's) is an error, never replaced.
  writer_ = std::make_unique<transport::RecordingWriter>(path.string(),
                                                         transport::RecordingWriterOptions{.exclusive = true});
  files_.push_back(path);
  openedAt_ = clock_.now();
}

void RelayRecorder::finishFile() {
  if (!writer_) return;
  writer_->close();
  writer_.reset();
}

void RelayRecorder::write(std::string_view topic, std::string_view payload, const transport::WireMessage& message) {
  if (closed_ || message.kind != transport::MessageKind::Events || message.events.empty()) return;
  try {
    if (writer_ && (writer_->bytesWritten() >= options_.rotateBytes || clock_.now() - openedAt_ >= options_.rotateAfter)) {
      finishFile();
    }
    if (!writer_) {
      if (retryAt_ && clock_.now() < *retryAt_) {
        unrecorded_ += message.events.size();
        return;
      }
      open();
      retryAt_.reset();
    }
    // The message as it arrived, one MCAP message per wire message (docs/recording-format.md).
    const bool written = writer_->write(topic, static_cast<uint64_t>(transport::toWireTime(clock_.wallNow())),
                                        static_cast<uint64_t>(transport::toWireTime(message.events.front().timestamp)),
                                        payload);
    (written ? events_ : dropped_) += message.events.size();
    writer_->flushIfDue();
  } catch (const transport::RecordingError& error) {
    failure_ = error.what();
    unrecorded_ += message.events.size();
    // The file keeps what reached its last chunk; the next one is tried after retryAfter.
    writer_.reset();
    retryAt_ = clock_.now() + options_.retryAfter;
  }
}

void RelayRecorder::close() {
  if (closed_) return;
  closed_ = true;
  try {
    finishFile();
  } catch (const transport::RecordingError& error) {
    if (failure_.empty()) failure_ = error.what();
  }
}

}  // namespace livemon::livemonctl
