// Checking an endpoint before connecting to it: its syntax, and a tcp:// host's lookup off the GUI
// thread, with a timeout, cancelled by a newer check or the checker's end.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include <QSignalSpy>
#include <QString>

#include <livemon/ui/dashboard/endpoint_check.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using namespace std::chrono_literals;
using test::waitFor;

bool refused(const QString& endpoint) { return !checkEndpointSyntax(endpoint).error.isEmpty(); }

TEST(EndpointSyntax, RefusesWhatCannotBeConnectedToAndSaysWhy) {
  for (const char* bad : {"", "  ", "gpu-node-3:5555", "://x", "tcp://gpu", "tcp://:5555", "tcp://*:5555",
                          "tcp://gpu:0", "tcp://gpu:65536", "tcp://gpu:+80", "tcp://gpu:http", "tcp://gpu:",
                          "tcp://gp u:5555", "tcp://[nonsense]:5555", "ipc://", "inproc://"}) {
    EXPECT_TRUE(refused(QString::fromUtf8(bad))) << bad;
  }
  EXPECT_TRUE(checkEndpointSyntax(QStringLiteral("tcp://gpu")).error.contains(QStringLiteral("port")));
  EXPECT_TRUE(checkEndpointSyntax(QStringLiteral("gpu:5555")).error.contains(QStringLiteral("tcp://")));
}

TEST(EndpointSyntax, OnlyAHostGivenByNameIsLookedUp) {
  for (const char* address : {"tcp://127.0.0.1:5555", "tcp://[::1]:5555", "ipc:///tmp/train.sock", "inproc://train"}) {
    const EndpointSyntax syntax = checkEndpointSyntax(QString::fromUtf8(address));
    EXPECT_TRUE(syntax.error.isEmpty()) << address << ": " << syntax.error.toStdString();
    EXPECT_TRUE(syntax.hostToResolve.isEmpty()) << address;
  }
  EXPECT_EQ(checkEndpointSyntax(QStringLiteral("tcp://gpu-node-3:5555")).hostToResolve, QStringLiteral("gpu-node-3"));
  EXPECT_EQ(checkEndpointSyntax(QStringLiteral("tcp://eth0;gpu-node-3:5555")).hostToResolve, QStringLiteral("gpu-node-3"));
}

// A lookup the test answers by hand.
struct ManualLookup {
  std::vector<QString> hosts;
  std::vector<std::function<void(const QString&)>> answers;
  EndpointChecker::Lookup function() {
    return [this](const QString& host, QObject*, std::function<void(const QString&)> done) {
      hosts.push_back(host);
      answers.push_back(std::move(done));
    };
  }
};

TEST(EndpointChecker, AddressesAreUsableAtOnceAndNamesResolveOffTheGuiThread) {
  ManualLookup lookup;
  EndpointChecker checker(10s, lookup.function());
  QSignalSpy resolved(&checker, &EndpointChecker::resolved);
  EXPECT_EQ(checker.check(QStringLiteral("tcp://127.0.0.1:5555")).state, EndpointVerdict::State::Usable);
  const EndpointVerdict bad = checker.check(QStringLiteral("tcp://gpu"));
  EXPECT_EQ(bad.state, EndpointVerdict::State::Refused);
  EXPECT_FALSE(bad.error.isEmpty());
  EXPECT_TRUE(lookup.hosts.empty());

  EXPECT_EQ(checker.check(QStringLiteral("tcp://gpu-node-3:5555")).state, EndpointVerdict::State::Resolving);
  EXPECT_TRUE(checker.isChecking());
  ASSERT_EQ(lookup.hosts, std::vector<QString>{QStringLiteral("gpu-node-3")});
  lookup.answers[0](QStringLiteral("gpu-node-3 does not resolve: Host not found"));
  ASSERT_EQ(resolved.count(), 1);
  EXPECT_EQ(resolved.at(0).at(0).toString(), QStringLiteral("tcp://gpu-node-3:5555"));
  EXPECT_TRUE(resolved.at(0).at(1).toString().contains(QStringLiteral("gpu-node-3")));
  EXPECT_FALSE(checker.isChecking());
}

TEST(EndpointChecker, ANewerCheckOrTheCheckersEndIgnoresAnOlderAnswer) {
  ManualLookup lookup;
  auto checker = std::make_unique<EndpointChecker>(10s, lookup.function());
  QSignalSpy resolved(checker.get(), &EndpointChecker::resolved);
  checker->check(QStringLiteral("tcp://first:1"));
  checker->check(QStringLiteral("tcp://second:2"));
  lookup.answers[0](QString());  // the first's answer comes late: ignored
  EXPECT_EQ(resolved.count(), 0);
  EXPECT_EQ(checker->checking(), QStringLiteral("tcp://second:2"));
  lookup.answers[1](QString());
  ASSERT_EQ(resolved.count(), 1);
  EXPECT_EQ(resolved.at(0).at(0).toString(), QStringLiteral("tcp://second:2"));
  EXPECT_TRUE(resolved.at(0).at(1).toString().isEmpty());

  checker->check(QStringLiteral("tcp://third:3"));
  checker.reset();
  lookup.answers[2](QString());  // after the checker's end: nothing happens
}

TEST(EndpointChecker, ALookupThatDoesNotAnswerIsRefusedAfterTheTimeout) {
  ManualLookup lookup;
  EndpointChecker checker(10ms, lookup.function());
  QSignalSpy resolved(&checker, &EndpointChecker::resolved);
  checker.check(QStringLiteral("tcp://slow-dns:5555"));
  ASSERT_TRUE(waitFor([&] { return resolved.count() == 1; }));
  EXPECT_TRUE(resolved.at(0).at(1).toString().contains(QStringLiteral("slow-dns")));
  lookup.answers[0](QString());  // the late answer changes nothing
  EXPECT_EQ(resolved.count(), 1);
}

// The system resolver: a name under ".invalid" never resolves; "localhost" does from /etc/hosts.
TEST(EndpointChecker, TheSystemResolverRefusesANameThatDoesNotResolve) {
  EndpointChecker checker;
  QSignalSpy resolved(&checker, &EndpointChecker::resolved);
  EXPECT_EQ(checker.check(QStringLiteral("tcp://no-such-host.invalid:5555")).state, EndpointVerdict::State::Resolving);
  ASSERT_TRUE(waitFor([&] { return resolved.count() == 1; }));
  EXPECT_FALSE(resolved.at(0).at(1).toString().isEmpty());
  EXPECT_EQ(checker.check(QStringLiteral("tcp://localhost:5555")).state, EndpointVerdict::State::Resolving);
  ASSERT_TRUE(waitFor([&] { return resolved.count() == 2; }));
  EXPECT_TRUE(resolved.at(1).at(1).toString().isEmpty()) << resolved.at(1).at(1).toString().toStdString();
}

}  // namespace
}  // namespace livemon::ui
