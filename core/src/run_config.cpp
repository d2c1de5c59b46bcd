#include <livemon/run_config.h>

#include <chrono>
#include <mutex>
#include <stdexcept>
#include <utility>

#include <livemon/event_handler.h>
#include <livemon/step.h>

namespace livemon {
namespace {

// Thread-safe: a mutex guards the event. The process's current config, as the event logged for it.
struct CurrentConfig {
  std::mutex mutex;
  std::optional<Event> event;
};

CurrentConfig& current() {
  static CurrentConfig config;
  return config;
}

void check(const RunConfig& config) {
  if (config.size() > kMaxRunConfigKeys) {
    throw std::invalid_argument("run config: " + std::to_string(config.size()) + " keys, at most " +
                                std::to_string(kMaxRunConfigKeys));
  }
  for (const auto& [key, value] : config) {
    if (key.empty()) throw std::invalid_argument("run config: an empty key");
    if (key == kStepKey) throw std::invalid_argument("run config: key \"step\" is the event's step; name it otherwise");
    if (key.size() > kMaxRunConfigKeyBytes) {
      throw std::invalid_argument("run config: key \"" + key.substr(0, 40) + "...\" is longer than " +
                                  std::to_string(kMaxRunConfigKeyBytes) + " bytes");
    }
    const auto* text = std::get_if<std::string>(&value);
    if (text != nullptr && text->size() > kMaxRunConfigStringBytes) {
      throw std::invalid_argument("run config: the value of \"" + key + "\" is longer than " +
                                  std::to_string(kMaxRunConfigStringBytes) + " bytes");
    }
  }
}

}  // namespace

Event makeRunConfigEvent(RunConfig config) {
  check(config);
  Event event{std::string(kRunConfigEventName), std::chrono::system_clock::now(), {}, currentStep()};
  event.data.reserve(config.size());
  for (auto& [key, value] : config) event.data.emplace(key, std::move(value));
  return event;
}

void setRunConfig(RunConfig config) {
  const Event event = makeRunConfigEvent(std::move(config));
  {
    const std::lock_guard lock(current().mutex);
    current().event = event;
  }
  logEvent(event);
}

std::optional<RunConfig> currentRunConfig() {
  const std::lock_guard lock(current().mutex);
  if (!current().event) return std::nullopt;
  return runConfigOf(*current().event);
}

std::optional<Event> currentRunConfigEvent() {
  const std::lock_guard lock(current().mutex);
  return current().event;
}

void clearRunConfig() {
  const std::lock_guard lock(current().mutex);
  current().event.reset();
}

std::optional<RunConfig> runConfigOf(const Event& event) {
  if (event.name != kRunConfigEventName) return std::nullopt;
  RunConfig config;
  for (const auto& [key, value] : event.data) {
    if (key != kStepKey) config.emplace(key, value);
  }
  return config;
}

}  // namespace livemon
