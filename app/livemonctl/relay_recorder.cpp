#include <livemonctl/relay_recorder.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace livemon::livemonctl {

namespace {

// The shared file's name starts so: no run's does (runFileStem keeps no '+').
constexpr std::string_view kSharedFileStem = "+shared";
// How often write() looks for idle run files.
constexpr std::chrono::seconds kIdleCheckInterval{1};

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

std::string runFileStem(std::string_view run) {
  std::string stem;
  for (const char c : run) {
    if (stem.size() >= kMaxRunFileStemBytes) break;
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    const bool dot = c == '.' && !stem.empty() && stem.back() != '.';
    stem += plain || dot ? c : '_';
  }
  return stem.empty() ? "run" : stem;
}

RelayRecorder::RelayRecorder(RelayRecorderOptions options)
    : options_(std::move(options)), clock_(options_.clock != nullptr ? *options_.clock : systemClock()) {
  if (options_.dir.empty()) throw std::invalid_argument("the recording directory is empty");
  if (options_.rotateBytes < 1) throw std::invalid_argument("rotate size must be at least 1 byte");
  if (options_.rotateAfter.count() < 1) throw std::invalid_argument("rotate time must be at least 1 ms");
  if (options_.retryAfter.count() < 1) throw std::invalid_argument("retry time must be at least 1 ms");
  if (options_.maxOpenFiles < 1) throw std::invalid_argument("open files must be at least 1");
  if (options_.closeIdleAfter.count() < 1) throw std::invalid_argument("idle time must be at least 1 ms");
  std::error_code error;
  std::filesystem::create_directories(options_.dir, error);
  if (error) {
    throw transport::RecordingError(options_.dir.string(), std::nullopt, "cannot create the directory: " + error.message());
  }
  // The first file is opened only when the first run's events come: said now rather than then.
  if (::access(options_.dir.c_str(), W_OK | X_OK) != 0) {
    throw transport::RecordingError(options_.dir.string(), std::nullopt,
                                    std::string("cannot write into the directory: ") + std::strerror(errno));
  }
}

RelayRecorder::~RelayRecorder() = default;

RelayRecorder::OpenFile RelayRecorder::open(std::string_view stem) {
  const std::string stamp = utcStamp(clock_.wallNow());
  const std::string name = std::string(stem) + "-" + stamp;
  std::filesystem::path path = options_.dir / (name + ".mcap");
  for (int n = 2; std::filesystem::exists(path); ++n) {
    path = options_.dir / (name + "-" + std::to_string(n) + ".mcap");
  }
  OpenFile file;
  // Exclusive: a file that appeared since the check (another relay's) is an error, never replaced.
  file.writer = std::make_unique<transport::RecordingWriter>(path.string(),
                                                             transport::RecordingWriterOptions{.exclusive = true});
  files_.push_back(path);
  file.openedAt = file.writtenAt = clock_.now();
  return file;
}

void RelayRecorder::finish(OpenFile& file) {
  if (!file.writer) return;
  auto writer = std::move(file.writer);
  writer->close();
}

void RelayRecorder::closeIdle() {
  const auto now = clock_.now();
  if (now < idleCheckAt_) return;
  idleCheckAt_ = now + kIdleCheckInterval;
  for (auto it = open_.begin(); it != open_.end();) {
    if (now - it->second.writtenAt < options_.closeIdleAfter) {
      ++it;
      continue;
    }
    OpenFile idle = std::move(it->second);
    it = open_.erase(it);
    finish(idle);  // may throw: the file is gone from open_ already
  }
  if (sharedFile_.writer && now - sharedFile_.writtenAt >= options_.closeIdleAfter) finish(sharedFile_);
}

RelayRecorder::OpenFile* RelayRecorder::fileFor(const std::string& run) {
  const auto now = clock_.now();
  const auto due = [&](const OpenFile& file) {
    return file.writer->bytesWritten() >= options_.rotateBytes || now - file.openedAt >= options_.rotateAfter;
  };
  auto found = open_.find(run);
  if (found != open_.end() && due(found->second)) {
    OpenFile rotated = std::move(found->second);
    open_.erase(found);
    found = open_.end();
    finish(rotated);
  }
  if (found != open_.end()) return &found->second;
  const bool own = open_.size() < options_.maxOpenFiles;
  if (!own && sharedFile_.writer && due(sharedFile_)) finish(sharedFile_);
  if (!own && sharedFile_.writer) return &sharedFile_;
  if (retryAt_ && now < *retryAt_) return nullptr;
  retryAt_.reset();
  if (!own) {
    sharedFile_ = open(kSharedFileStem);
    return &sharedFile_;
  }
  return &open_.emplace(run, open(runFileStem(run))).first->second;
}

void RelayRecorder::write(const transport::EventBatchView& batch) {
  if (closed_ || batch.kind() != transport::MessageKind::Events || batch.empty()) return;
  OpenFile* file = nullptr;
  try {
    closeIdle();
    file = fileFor(batch.source().run);
    if (file == nullptr) {
      unrecorded_ += batch.size();
      return;
    }
    // The message as it arrived, one MCAP message per wire message (docs/recording-format.md).
    const bool written = file->writer->write(batch.topic(), static_cast<uint64_t>(transport::toWireTime(clock_.wallNow())),
                                             static_cast<uint64_t>(batch[0].timestampNs()), batch.payload());
    (written ? events_ : dropped_) += batch.size();
    if (written && file == &sharedFile_) shared_ += batch.size();
    file->writtenAt = clock_.now();
    file->writer->flushIfDue();
  } catch (const transport::RecordingError& error) {
    failure_ = error.what();
    unrecorded_ += batch.size();
    // The file keeps what reached its last chunk; a new one is tried after retryAfter.
    if (file == &sharedFile_) {
      sharedFile_.writer.reset();
    } else if (file != nullptr) {
      open_.erase(batch.source().run);
    }
    retryAt_ = clock_.now() + options_.retryAfter;
  }
}

void RelayRecorder::close() {
  if (closed_) return;
  closed_ = true;
  const auto closeOne = [this](OpenFile& file) {
    try {
      finish(file);
    } catch (const transport::RecordingError& error) {
      if (failure_.empty()) failure_ = error.what();
    }
  };
  for (auto& [run, file] : open_) closeOne(file);
  open_.clear();
  closeOne(sharedFile_);
}

}  // namespace livemon::livemonctl
