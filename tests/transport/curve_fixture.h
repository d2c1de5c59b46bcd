#pragma once

// The keys and counters of the CURVE tests (curve_test.cpp, curve_access_test.cpp).
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <livemon/transport/curve.h>
#include <livemon/transport/publisher.h>
#include <livemon/transport/subscriber.h>

#include "test_support.h"

namespace livemon::transport::test {

inline void writeFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Thread-safety: a plain value type, owned by one test.
// A key pair written as NAME.key and NAME.key_secret into `dir`.
struct Keys {
  Keys(const std::filesystem::path& dir, const std::string& name) : pair(generateCurveKeyPair()) {
    publicFile = (dir / (name + ".key")).string();
    secretFile = (dir / (name + ".key_secret")).string();
    writeFile(publicFile, curveCertificateText(pair, false));
    writeFile(secretFile, curveCertificateText(pair, true));
  }
  CurveKeyPair pair;
  std::string publicFile;
  std::string secretFile;
};

// Thread-safety: a plain value type, owned by one test.
// The keys of a test: a server, a client in the allow list and a stranger who is not.
struct Fixture {
  TempDir temp;
  std::filesystem::path allow = temp.path() / "allow";
  std::filesystem::path own = temp.path() / "own";
  Keys server{(std::filesystem::create_directory(own), own), "server"};
  Keys client{(std::filesystem::create_directory(allow), allow), "client"};
  Keys stranger{own, "stranger"};

  CurveOptions serverCurve() const { return {server.secretFile, allow.string(), "", false}; }
  CurveOptions clientCurve(const Keys& keys) const { return {keys.secretFile, "", server.publicFile, false}; }
  // A publisher that admits the subscribers in `allow`, and a subscriber to it holding `keys`.
  PublisherOptions publisherOptions() const {
    PublisherOptions options = testPublisherOptions();
    options.handleLoggedEvents = false;
    options.curve = serverCurve();
    return options;
  }
  SubscriberOptions subscriberOptions(const std::string& endpoint, const Keys& keys) const {
    SubscriberOptions options = connectTo({endpoint});
    options.curve = clientCurve(keys);
    return options;
  }
};

// Thread-safe: events may be counted on one thread and read on another.
// Counts the "curve.test" events a subscriber got.
struct Counted {
  std::atomic<uint64_t> events{0};
  SubscriberCallbacks callbacks() {
    SubscriberCallbacks callbacks;
    callbacks.onEvent = [this](ReceivedEvent& e) {
      if (e.event.name == "curve.test") ++events;
    };
    return callbacks;
  }
};

}  // namespace livemon::transport::test
