#include <livemon/transport/recording_history.h>

#include <algorithm>
#include <system_error>

#include <livemon/transport/recording.h>
#include <livemon/transport/wire_format.h>

namespace livemon::transport {

namespace {

// Messages read per piece: a message holds one event (version 1) or a batch as it was received
// (version 2), so a piece is some 100 KiB to a few MiB.
constexpr std::size_t kPieceMessages = 512;

struct ReadingState {
  std::vector<std::filesystem::path> files;
  std::size_t file = 0;
  std::unique_ptr<RecordingReader> reader;
  uint64_t lastLogTimeNs = 0;  // of the last message taken
  uint64_t takenAtLast = 0;    // messages taken at exactly lastLogTimeNs, in this file
};

std::vector<std::filesystem::path> recordingsIn(const std::filesystem::path& dir) {
  std::vector<std::pair<std::filesystem::file_time_type, std::filesystem::path>> found;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (entry.path().extension() != ".mcap") continue;
    std::error_code timeError;
    const auto written = entry.last_write_time(timeError);
    if (!timeError) found.emplace_back(written, entry.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::filesystem::path> files;
  for (auto& [written, path] : found) files.push_back(std::move(path));
  return files;
}

}  // namespace

bool RecordingHistoryArchive::next(Cursor& cursor, int64_t beforeNs, std::vector<HistoryMessage>& out) {
  if (!cursor.state) {
    auto state = std::make_shared<ReadingState>();
    state->files = recordingsIn(dir_);
    cursor.state = state;
  }
  auto& state = *static_cast<ReadingState*>(cursor.state.get());
  if (beforeNs <= 0) return false;
  const auto before = static_cast<uint64_t>(beforeNs);
  while (state.file < state.files.size()) {
    if (!state.reader) {
      try {
        state.reader = std::make_unique<RecordingReader>(state.files[state.file].string());
      } catch (const RecordingError&) {
        ++state.file;
        continue;
      }
    }
    // From where the last piece ended (the chunk index skips what lies before), skipping the
    // messages at exactly that time that the last piece took.
    std::size_t taken = 0;
    uint64_t skipAtLast = state.takenAtLast;
    state.reader->forEachMessage(state.lastLogTimeNs, before - 1, [&](const RecordedMessage& message) {
      if (message.logTimeNs == state.lastLogTimeNs && skipAtLast > 0) {
        --skipAtLast;
        return true;
      }
      if (message.logTimeNs == state.lastLogTimeNs) {
        ++state.takenAtLast;
      } else {
        state.lastLogTimeNs = message.logTimeNs;
        state.takenAtLast = 1;
      }
      ++taken;
      if (message.channel != nullptr && message.channel->topic != kHeartbeatTopic) {
        out.push_back(HistoryMessage{message.channel->topic, std::make_shared<const std::string>(message.payload),
                                          static_cast<int64_t>(message.publishTimeNs),
                                          static_cast<int64_t>(message.logTimeNs)});
      }
      return taken < kPieceMessages;
    });
    if (taken > 0) return true;
    // This file holds nothing more from before `before`; the next one (later) may.
    state.reader.reset();
    if (state.file + 1 < state.files.size()) state.takenAtLast = 0;  // kept for resume() in the last
    ++state.file;
  }
  return false;
}

void RecordingHistoryArchive::resume(Cursor& cursor) {
  if (!cursor.state) return;
  auto& state = *static_cast<ReadingState*>(cursor.state.get());
  if (state.file < state.files.size() || state.files.empty()) return;
  const std::filesystem::path last = state.files.back();
  state.files = recordingsIn(dir_);
  const auto found = std::find(state.files.begin(), state.files.end(), last);
  state.file = found == state.files.end() ? state.files.size() : static_cast<std::size_t>(found - state.files.begin());
  state.reader.reset();
}

}  // namespace livemon::transport
