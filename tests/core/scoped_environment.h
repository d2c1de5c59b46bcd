#pragma once

#include <stdlib.h>

#include <optional>
#include <string>

namespace livemon::testing {

// Not thread-safe: one owner at a time. Unsets an environment variable for a test's duration
// (set() gives it a value meanwhile) and restores what it was afterwards.
class ScopedEnvironment {
 public:
  explicit ScopedEnvironment(std::string name) : name_(std::move(name)) {
    if (const char* value = getenv(name_.c_str())) saved_ = value;
    unsetenv(name_.c_str());
  }
  ~ScopedEnvironment() {
    if (saved_) {
      setenv(name_.c_str(), saved_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

  void set(const char* value) { setenv(name_.c_str(), value, 1); }

 private:
  std::string name_;
  std::optional<std::string> saved_;
};

}  // namespace livemon::testing
