#include "kept_configs.h"

#include <livemon/run_config.h>

namespace livemon::transport::detail {

namespace {

// Bookkeeping counted beside a config's bytes: its entries in the two maps.
constexpr std::size_t kKeptOverhead = sizeof(KeptConfigs::Kept) + 2 * 64;

}  // namespace

bool KeptConfigs::isConfigTopic(std::string_view topic) noexcept { return topic == kRunConfigEventName; }

void KeptConfigs::offer(uint64_t index, const HistoryMessage& message) {
  if (!isConfigTopic(message.topic)) return;
  WireMessage decoded;
  if (decodeMessage(message.topic, *message.payload, limits_, decoded) != DecodeStatus::Ok ||
      decoded.kind != MessageKind::Events || decoded.events.empty()) {
    return;
  }
  const std::size_t cost = message.topic.size() + message.payload->size() + decoded.source.run.size() +
                           decoded.source.host.size() + kKeptOverhead;
  if (const auto older = bySource_.find(decoded.source); older != bySource_.end()) {
    erase(byIndex_.find(older->second));
  }
  if (cost > maxBytes_) {
    ++dropped_;
    return;
  }
  while (!byIndex_.empty() && (byIndex_.size() >= maxSources_ || bytes_ + cost > maxBytes_)) {
    erase(byIndex_.begin());
    ++dropped_;
  }
  bySource_.emplace(decoded.source, index);
  byIndex_.emplace(index, Kept{index, message, std::move(decoded.source), cost});
  bytes_ += cost;
}

bool KeptConfigs::isCopy(std::string_view topic, std::string_view payload) const {
  if (!isConfigTopic(topic) || bySource_.empty()) return false;
  WireMessage decoded;
  if (decodeMessage(topic, payload, limits_, decoded) != DecodeStatus::Ok) return false;
  const auto kept = bySource_.find(decoded.source);
  if (kept == bySource_.end()) return false;
  return *byIndex_.at(kept->second).message.payload == payload;
}

const KeptConfigs::Kept* KeptConfigs::firstFrom(uint64_t index) const {
  const auto found = byIndex_.lower_bound(index);
  return found == byIndex_.end() ? nullptr : &found->second;
}

void KeptConfigs::erase(std::map<uint64_t, Kept>::iterator kept) {
  bytes_ -= kept->second.cost;
  bySource_.erase(kept->second.source);
  byIndex_.erase(kept);
}

}  // namespace livemon::transport::detail
