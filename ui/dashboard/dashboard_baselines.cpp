// The Dashboard's baselines (recordings shown beside the live runs, closed one at a time, and
// moved along with the live run's elapsed time when following it), and the playheads of its
// recordings.
#include <livemon/ui/dashboard/dashboard.h>

#include <algorithm>

#include <QSettings>

#include <livemon/ui/model/stat_registry.h>

namespace livemon::ui {

const QString Dashboard::kBaselineFollowKey = QStringLiteral("baseline/followLive");

std::vector<ReplaySession*> Dashboard::baselines() const {
  std::vector<ReplaySession*> result;
  result.reserve(baselines_.size());
  for (const auto& baseline : baselines_) result.push_back(baseline.get());
  return result;
}

void Dashboard::closeBaseline(ReplaySession* baseline) {
  const auto found = std::find_if(baselines_.begin(), baselines_.end(),
                                  [baseline](const std::unique_ptr<ReplaySession>& open) { return open.get() == baseline; });
  if (found == baselines_.end()) return;
  const QString endpoint = (*found)->endpointLabel();
  // As closing a replay: the session's worker is joined first, then what it staged is applied,
  // so that its sources are removed with the rest instead of turning up after.
  baselines_.erase(found);
  applyStaged();
  removeReplayed(endpoint);
  emit baselinesChanged();
}

void Dashboard::setBaselinesFollowLive(bool follow) {
  settings_->setValue(kBaselineFollowKey, follow);
  if (follow == baselinesFollowLive_) return;
  baselinesFollowLive_ = follow;
  moveBaselines();
}

std::optional<std::chrono::nanoseconds> Dashboard::liveElapsed() const {
  // The sources of recordings are not live: their endpoint is the recording's label.
  QStringList recorded;
  if (replay_) recorded << replay_->endpointLabel();
  if (openingReplay_) recorded << openingReplay_->endpointLabel();
  for (const auto& baseline : baselines_) recorded << baseline->endpointLabel();
  // The newest run: the one most likely being compared (ranks of one run start together).
  std::optional<double> startMs;
  for (SourceId id = 0; id < registry_->sourceIdEnd(); ++id) {
    const SourceEntry* source = registry_->source(id);
    if (source == nullptr || !source->startMs || recorded.contains(source->endpoint)) continue;
    startMs = std::max(startMs.value_or(*source->startMs), *source->startMs);
  }
  if (!startMs) return std::nullopt;
  const Clock& clock = options_.clock != nullptr ? *options_.clock : systemClock();
  const double nowMs = std::chrono::duration<double, std::milli>(clock.wallNow().time_since_epoch()).count();
  return std::chrono::nanoseconds(static_cast<int64_t>(std::max(0.0, nowMs - *startMs) * 1e6));
}

int64_t Dashboard::baselineTarget(const ReplaySession& baseline, std::optional<std::chrono::nanoseconds> elapsed) const {
  const RecordingInfo& info = baseline.info();
  if (!baselinesFollowLive_ || !elapsed) return info.endNs;
  // From the baseline run's own start (the axis "Since run start" counts from it too), which a
  // recording begun mid-run lies before; until its sources are known, from the recording's start.
  std::optional<double> startMs;
  for (SourceId id = 0; id < registry_->sourceIdEnd(); ++id) {
    const SourceEntry* source = registry_->source(id);
    if (source == nullptr || !source->startMs || source->endpoint != baseline.endpointLabel()) continue;
    startMs = std::min(startMs.value_or(*source->startMs), *source->startMs);
  }
  const double startNs = startMs ? *startMs * 1e6 : static_cast<double>(info.startNs);
  const double target = startNs + static_cast<double>(elapsed->count());
  // Beyond the timeline's ends it stops at them (moveTo clamps); the double keeps the sum from
  // overflowing.
  if (target >= static_cast<double>(info.endNs)) return info.endNs;
  if (target <= static_cast<double>(info.startNs)) return info.startNs;
  return static_cast<int64_t>(target);
}

std::optional<double> Dashboard::playheadSinceRunStart() const {
  const std::optional<double> playhead = playheadMs();
  if (!playhead) return std::nullopt;
  // The earliest run's: the others' lines end before it, as they started later.
  std::optional<double> startMs;
  for (SourceId id = 0; id < registry_->sourceIdEnd(); ++id) {
    const SourceEntry* source = registry_->source(id);
    if (source == nullptr || !source->startMs || source->endpoint != replay_->endpointLabel()) continue;
    startMs = std::min(startMs.value_or(*source->startMs), *source->startMs);
  }
  if (!startMs) return std::nullopt;
  return (*playhead - *startMs) / 1000.0;
}

std::optional<double> Dashboard::recordingPlayheadMs(SourceId id) const {
  const SourceEntry* source = registry_->source(id);
  if (source == nullptr) return std::nullopt;
  const auto playhead = [](const ReplaySession& session) { return static_cast<double>(session.playheadNs()) / 1e6; };
  if (replay_ && replay_->isOpen() && source->endpoint == replay_->endpointLabel()) return playhead(*replay_);
  for (const auto& baseline : baselines_) {
    if (baseline->isOpen() && source->endpoint == baseline->endpointLabel()) return playhead(*baseline);
  }
  return std::nullopt;
}

void Dashboard::moveBaselines() {
  if (baselines_.empty()) return;
  const std::optional<std::chrono::nanoseconds> elapsed = baselinesFollowLive_ ? liveElapsed() : std::nullopt;
  for (const auto& baseline : baselines_) {
    if (baseline->isOpen()) baseline->moveTo(baselineTarget(*baseline, elapsed));
  }
}

}  // namespace livemon::ui
