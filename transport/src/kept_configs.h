#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string_view>

#include <livemon/source_info.h>
#include <livemon/transport/history_archive.h>
#include <livemon/transport/wire_format.h>

// Only transport/src (and tests) include this header.
namespace livemon::transport::detail {

// Not thread-safe: one owner at a time; owned by its HistoryStore.
//
// The newest livemon.run_config message (livemon/run_config.h) of each source a history has kept,
// held after the history's byte bound has dropped it, so that a reader who joins a long run late
// still learns the run's config. Bounded against publishers that send many configs, or many
// sources that each send one: a source's newer config replaces its older one, and beyond
// maxSources configs or maxBytes bytes the one kept longest ago goes (counted in dropped()).
// Each message kept costs one decode of its bytes, to learn its source.
class KeptConfigs {
 public:
  static constexpr std::size_t kMaxSources = 4096;
  static constexpr std::size_t kMaxBytes = 16 * 1024 * 1024;

  // Thread-safety: a plain value type. A config message and its number in the HistoryStore.
  struct Kept {
    uint64_t index = 0;
    HistoryMessage message;
    SourceInfo source;
    std::size_t cost = 0;
  };

  KeptConfigs(std::size_t maxBytes, const WireLimits& limits, std::size_t maxSources = kMaxSources)
      : maxBytes_(maxBytes), maxSources_(maxSources), limits_(limits) {}

  static bool isConfigTopic(std::string_view topic) noexcept;

  // Offers message number `index` of the store. A config message that decodes replaces its
  // source's older one; others (and one larger than maxBytes) are not kept.
  void offer(uint64_t index, const HistoryMessage& message);

  // True when `payload` on `topic` is, byte for byte, the config kept for its source: a copy a
  // connecting publisher sent again (ConfigResend), which the history and a relay's recordings
  // already hold.
  bool isCopy(std::string_view topic, std::string_view payload) const;

  // The config kept with the lowest number at or after `index`, or null.
  const Kept* firstFrom(uint64_t index) const;

  std::size_t size() const noexcept { return byIndex_.size(); }
  std::size_t bytes() const noexcept { return bytes_; }
  // Configs let go to stay within the bounds (not those a newer one of their source replaced).
  uint64_t dropped() const noexcept { return dropped_; }

 private:
  void erase(std::map<uint64_t, Kept>::iterator kept);

  const std::size_t maxBytes_;
  const std::size_t maxSources_;
  const WireLimits limits_;
  std::map<uint64_t, Kept> byIndex_;         // oldest first
  std::map<SourceInfo, uint64_t> bySource_;  // a source's entry in byIndex_
  std::size_t bytes_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace livemon::transport::detail
