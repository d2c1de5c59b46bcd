#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#if defined(__SANITIZE_ADDRESS__)
// The sanitizer runtime's; GCC does not ship its header (sanitizer/allocator_interface.h).
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#endif

#include <livemon/event.h>
#include <livemon/transport/payload_publisher.h>
#include <livemon/transport/publisher.h>
#include <livemon/transport/relay.h>
#include <livemon/transport/subscriber.h>

#include "test_paths.h"

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

// Not thread-safe: one test thread reads it.
// The growth of this process's peak resident memory (VmHWM) since construction, as a plain build
// would see it. The peak is reset at construction when the kernel allows it
// (/proc/self/clear_refs); otherwise growth is measured from the peak so far, which can only make
// it look smaller. Under AddressSanitizer freed memory waits in a quarantine instead of being
// reused, so there the heap bytes in use are compared instead (when growthKb() is called). Under
// ThreadSanitizer every byte the program touches costs shadow memory besides.
class PeakMemory {
 public:
  PeakMemory() {
    std::ofstream("/proc/self/clear_refs") << "5";
    baselineKb_ = currentKb();
  }
  int64_t growthKb() const { return (currentKb() - baselineKb_) / kShadowFactor; }

  static int64_t statusKb(const std::string& field) {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind(field, 0) == 0) return std::stoll(line.substr(field.size()));
    }
    return -1;
  }

 private:
#if defined(__SANITIZE_THREAD__)
  static constexpr int64_t kShadowFactor = 4;
#else
  static constexpr int64_t kShadowFactor = 1;
#endif
  static int64_t currentKb() {
#if defined(__SANITIZE_ADDRESS__)
    return static_cast<int64_t>(__sanitizer_get_current_allocated_bytes() / 1024);
#else
    return statusKb("VmHWM:");
#endif
  }

  int64_t baselineKb_ = 0;
};

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

// An inproc:// endpoint no other in this process has used: "inproc://livemon-test-7".
inline std::string uniqueInproc() {
  static std::atomic<int> counter{0};
  return "inproc://livemon-test-" + std::to_string(counter++);
}

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

// Publisher options that connect to `endpoint` (a relay's listen endpoint) instead of binding.
inline PublisherOptions connectedPublisherOptions(const std::string& endpoint,
                                                  std::optional<int64_t> rank = std::nullopt) {
  PublisherOptions options = testPublisherOptions();
  options.bind.clear();
  options.connect = {endpoint};
  options.rank = rank;
  return options;
}

// A relay on free loopback ports that reports itself every 50 ms.
inline RelayOptions loopbackRelayOptions() {
  RelayOptions options;
  options.listen = "tcp://127.0.0.1:*";
  options.serve = "tcp://127.0.0.1:*";
  options.reportInterval = std::chrono::milliseconds(50);
  return options;
}

// Subscriber options that connect to `endpoints`.
inline SubscriberOptions connectTo(std::vector<std::string> endpoints, int receiveHighWaterMark = 1000,
                                   std::vector<std::string> filters = {}) {
  SubscriberOptions options;
  options.connect = std::move(endpoints);
  options.receiveHighWaterMark = receiveHighWaterMark;
  options.filters = std::move(filters);
  return options;
}

inline Event makeEvent(std::string name, std::unordered_map<std::string, DataValue> data,
                       std::chrono::system_clock::time_point timestamp = std::chrono::system_clock::time_point(
                           std::chrono::nanoseconds(1'700'000'000'123'456'789))) {
  return Event{std::move(name), timestamp, std::move(data)};
}

using livemon::test_paths::sourceDir;

// Sends an event named `name` under `source` (numbered from `sequence` on) until `subscriber`
// receives one: then the subscription has reached the publisher, and what it sent before has
// passed (one connection keeps its order).
inline bool sendUntilReceived(PayloadPublisher& publisher, Subscriber& subscriber, const SourceInfo& source,
                              const std::string& name, uint64_t& sequence) {
  bool seen = false;
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](ReceivedEvent& event) { seen = seen || event.event.name == name; };
  const auto end = std::chrono::steady_clock::now() + kDeadline;
  while (!seen && std::chrono::steady_clock::now() < end) {
    publisher.send(name, encodeEventsPayload(source, sequence++, name, {makeEvent(name, {{"x", 1.0}})}));
    subscriber.poll(std::chrono::milliseconds(20), callbacks);
  }
  return seen;
}

}  // namespace livemon::transport::test

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <optional>
#include <vector>

extern char** environ;

namespace livemon::transport::test {

// Not thread-safe: one test thread drives it.
// A child process started with posix_spawn, its stdout and stderr read through pipes. The
// destructor kills it if it still runs.
class ChildProcess {
 public:
  explicit ChildProcess(const std::vector<std::string>& argv) {
    int out[2];
    int err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    const int rc = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    close(err[1]);
    stdout_ = out[0];
    stderr_ = err[0];
    if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
  }
  ~ChildProcess() {
    if (!status_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(stdout_);
    close(stderr_);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Reads what the child writes to stdout until `done(output so far)` or the deadline.
  bool readStdoutUntil(const std::function<bool(const std::string&)>& done, std::chrono::milliseconds deadline = kDeadline,
                       const std::function<void()>& whileWaiting = {}) {
    const auto end = std::chrono::steady_clock::now() + deadline;
    while (!done(stdoutText_)) {
      if (std::chrono::steady_clock::now() >= end) return false;
      if (whileWaiting) whileWaiting();
      if (readSome(stdout_, stdoutText_, 20) == Read::Closed) return done(stdoutText_);
    }
    return true;
  }

  // Reads what the child writes to stderr until `done(stderr so far)` or the deadline.
  bool readStderrUntil(const std::function<bool(const std::string&)>& done, std::chrono::milliseconds deadline = kDeadline) {
    const auto end = std::chrono::steady_clock::now() + deadline;
    while (!done(stderrText_)) {
      if (std::chrono::steady_clock::now() >= end) return false;
      if (readSome(stderr_, stderrText_, 20) == Read::Closed) return done(stderrText_);
    }
    return true;
  }

  void signal(int number) { kill(pid_, number); }
  pid_t pid() const { return pid_; }

  // The exit status (as from waitpid), or nothing if the child still runs after `deadline`.
  // Collects its remaining output.
  std::optional<int> wait(std::chrono::milliseconds deadline = kDeadline) {
    const auto end = std::chrono::steady_clock::now() + deadline;
    while (!status_) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        status_ = status;
        break;
      }
      if (std::chrono::steady_clock::now() >= end) return std::nullopt;
      readSome(stdout_, stdoutText_, 10);
      readSome(stderr_, stderrText_, 10);
    }
    while (readSome(stdout_, stdoutText_, 0) == Read::Data) {
    }
    while (readSome(stderr_, stderrText_, 0) == Read::Data) {
    }
    return status_;
  }

  // Waits for the child, then its exit status; -1 when it did not exit by the deadline or was
  // ended by a signal.
  int exitCode(std::chrono::milliseconds deadline = kDeadline) {
    const std::optional<int> status = wait(deadline);
    return status && WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
  }

  const std::string& out() const { return stdoutText_; }
  const std::string& err() const { return stderrText_; }

 private:
  enum class Read { Data, Nothing, Closed };

  // Waits up to `timeoutMs` for data on `fd` and appends it.
  static Read readSome(int fd, std::string& text, int timeoutMs) {
    pollfd item{fd, POLLIN, 0};
    if (::poll(&item, 1, timeoutMs) <= 0) return Read::Nothing;
    char buffer[4096];
    const ssize_t got = read(fd, buffer, sizeof(buffer));
    if (got <= 0) return Read::Closed;
    text.append(buffer, static_cast<std::size_t>(got));
    return Read::Data;
  }

  pid_t pid_ = -1;
  int stdout_ = -1;
  int stderr_ = -1;
  std::string stdoutText_;
  std::string stderrText_;
  std::optional<int> status_;
};

}  // namespace livemon::transport::test
