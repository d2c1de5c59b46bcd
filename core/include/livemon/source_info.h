#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace livemon {

// Thread-safety: a plain value type.
//
// Who published an event: a publisher's identity as the wire carries it (docs/wire-format.md) and
// as the subscriber, the recordings, the analyses and the dashboard know it. A restarted publisher
// has a new instanceId and startTime, so it is a different source even when run, host and pid
// repeat. (livemon::transport::SourceInfo names this same type.)
struct SourceInfo {
  std::string run;
  std::string host;
  int64_t pid = 0;
  std::optional<int64_t> rank;
  uint64_t instanceId = 0;                           // random, drawn when the publisher starts
  std::chrono::system_clock::time_point startTime;   // when the publisher started
  // The distributed job's size and this process's rank on its node (torchrun's WORLD_SIZE and
  // LOCAL_RANK). On the wire a worldSize is at least 1 and bounds rank and localRank; see
  // transport::identityBroken(). Last, so that brace-initialised SourceInfos written before them
  // still compile.
  std::optional<int64_t> worldSize;
  std::optional<int64_t> localRank;

  friend bool operator==(const SourceInfo&, const SourceInfo&) = default;
  friend auto operator<=>(const SourceInfo&, const SourceInfo&) = default;
};

// "run@host:pid" plus " rank N" when a rank is set, " rank N/W" when the world size is set too.
std::string describe(const SourceInfo& source);

}  // namespace livemon
