#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include <livemon/event.h>
#include <livemon/transport/publisher.h>
#include <livemon/transport/subscriber.h>

namespace livemon::transport::test {

// Generous: a loaded 2-core machine under ThreadSanitizer is slow, and a condition that holds
// returns at once anyway.
inline constexpr std::chrono::seconds kDeadline{30};

// Checks `condition` until it holds or `deadline` passes; returns whether it holds.
inline bool waitUntil(const std::function<bool()>& condition, std::chrono::milliseconds deadline = kDeadline) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Polls `subscriber` (which blocks up to 20 ms at a time) until `done` holds or the deadline passes.
inline bool pollUntil(Subscriber& subscriber, const SubscriberCallbacks& callbacks, const std::function<bool()>& done,
                      std::chrono::milliseconds deadline = kDeadline) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= end) return false;
    subscriber.poll(std::chrono::milliseconds(20), callbacks);
  }
  return true;
}

// Polls until a source with `identity` is known: then the connection and its subscriptions are
// in place and nothing published afterwards is lost to the ZeroMQ "slow joiner" effect.
inline bool waitForSource(Subscriber& subscriber, const SourceInfo& identity) {
  return pollUntil(subscriber, {}, [&] {
    for (const SourceStatus& status : subscriber.sources()) {
      if (*status.source == identity) return true;
    }
    return false;
  });
}

// A directory removed with its contents at destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "livemon-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Publisher options for tests: a wildcard port on loopback, fast heartbeats, no self-report Stats.
inline PublisherOptions testPublisherOptions(std::string endpoint = "tcp://127.0.0.1:*") {
  PublisherOptions options;
  options.bind = {std::move(endpoint)};
  options.heartbeatInterval = std::chrono::milliseconds(20);
  options.runName = "test";
  options.statName.clear();
  options.linger = std::chrono::milliseconds(500);
  return options;
}

inline Event makeEvent(std::string name, std::unordered_map<std::string, DataValue> data,
                       std::chrono::system_clock::time_point timestamp = std::chrono::system_clock::time_point(
                           std::chrono::nanoseconds(1'700'000'000'123'456'789))) {
  return Event{std::move(name), timestamp, std::move(data)};
}

inline std::string sourceDir() { return LIVEMON_SOURCE_DIR; }

}  // namespace livemon::transport::test
