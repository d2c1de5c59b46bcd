#include <livemon/transport/recording_history.h>

#include <sys/stat.h>

#include <livemon/transport/recording.h>
#include <livemon/transport/wire_format.h>

namespace livemon::transport {

namespace {

// Messages read per piece: a message holds one event (version 1) or a batch as it was received
// (version 2), so a piece is some 100 KiB to a few MiB.
constexpr std::size_t kPieceMessages = 512;

// Thread-safety: a plain value type (one answer's, on the thread that answers). Where the pieces
// taken from one file ended. Each file has its own: a relay writes a file per run, several at once, so one file's log
// times say nothing of another's.
struct FilePlace {
  uint64_t lastLogTimeNs = 0;  // of the last message taken
  uint64_t takenAtLast = 0;    // messages taken at exactly lastLogTimeNs
};

// Thread-safety: one answer's, on the thread that answers.
struct ReadingState {
  std::size_t count = 0;  // the files added when the answer began (or resumed)
  std::size_t file = 0;
  std::unique_ptr<RecordingReader> reader;
  std::vector<FilePlace> places;  // per file added, in the order added
};

}  // namespace

bool RecordingHistoryArchive::add(const std::filesystem::path& file) {
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  const std::lock_guard lock(mutex_);
  files_.push_back(Recording{file, static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)});
  return true;
}

std::size_t RecordingHistoryArchive::count() const {
  const std::lock_guard lock(mutex_);
  return files_.size();
}

RecordingHistoryArchive::Recording RecordingHistoryArchive::at(std::size_t index) const {
  const std::lock_guard lock(mutex_);
  return files_.at(index);
}

bool RecordingHistoryArchive::next(Cursor& cursor, int64_t beforeNs, std::vector<HistoryMessage>& out) {
  if (!cursor.state) {
    auto state = std::make_shared<ReadingState>();
    state->count = count();
    cursor.state = state;
  }
  auto& state = *static_cast<ReadingState*>(cursor.state.get());
  if (beforeNs <= 0 || state.file >= state.count) return false;
  const auto before = static_cast<uint64_t>(beforeNs);
  if (state.places.size() < state.count) state.places.resize(state.count);
  FilePlace& place = state.places[state.file];
  if (!state.reader) {
    const Recording file = at(state.file);
    RecordingFileCheck check;
    check.followSymlinks = false;
    check.identity = std::pair(file.device, file.inode);
    try {
      // One the relay is still writing has no summary yet: scanned a part per call, below.
      state.reader = std::make_unique<RecordingReader>(file.path.string(), check, RecordingScanLater{});
    } catch (const RecordingError&) {
      ++state.file;  // the next call opens the next one
      return state.file < state.count;
    }
  }
  // From where the last piece ended (the chunk index skips what lies before), skipping the
  // messages at exactly that time that the last piece took.
  std::size_t taken = 0;
  std::size_t bytes = 0;
  uint64_t skipAtLast = place.takenAtLast;
  state.reader->forEachMessage(place.lastLogTimeNs, before - 1, [&](const RecordedMessage& message) {
    if (message.logTimeNs == place.lastLogTimeNs && skipAtLast > 0) {
      --skipAtLast;
      return true;
    }
    if (message.logTimeNs == place.lastLogTimeNs) {
      ++place.takenAtLast;
    } else {
      place.lastLogTimeNs = message.logTimeNs;
      place.takenAtLast = 1;
    }
    ++taken;
    bytes += message.payload.size();
    if (message.channel != nullptr && message.channel->topic != kHeartbeatTopic) {
      out.push_back(HistoryMessage{message.channel->topic, std::make_shared<const std::string>(message.payload),
                                   static_cast<int64_t>(message.publishTimeNs), static_cast<int64_t>(message.logTimeNs)});
    }
    return taken < kPieceMessages && bytes < kPieceBytes;
  });
  if (taken > 0) return true;
  // Nothing more in the part scanned so far: the next call reads from the part this one scans.
  const std::size_t chunksKnown = state.reader->summary().chunks.size();
  if (!state.reader->scanOn(kScanBytesPerCall) || state.reader->summary().chunks.size() > chunksKnown) return true;
  // This file holds nothing more from before `before`; the next one (later) may, on the next call.
  state.reader.reset();
  ++state.file;
  return state.file < state.count;
}

void RecordingHistoryArchive::resume(Cursor& cursor) {
  if (!cursor.state) return;
  auto& state = *static_cast<ReadingState*>(cursor.state.get());
  if (state.file < state.count || state.count == 0) {
    state.count = count();
    return;
  }
  // Every file again, each from where its pieces ended (the relay may still be writing any of
  // them), then those added since.
  state.file = 0;
  state.count = count();
  state.reader.reset();
}

}  // namespace livemon::transport
