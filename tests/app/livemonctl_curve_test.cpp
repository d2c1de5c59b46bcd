// CURVE from the command line: `livemonctl keygen`, the --curve-* options and their environment
// variables, and --require-curve, with livemonctl processes talking to each other.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <csignal>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>

#include <livemon/transport/curve.h>
#include <livemon/transport/publisher.h>
#include <livemon/transport/subscriber.h>
#include <livemonctl/command.h>
#include <livemonctl/keygen.h>

#include "relay_process.h"
#include "test_paths.h"
#include "test_support.h"

using livemon::test_paths::livemonctlPath;

namespace livemon::livemonctl {
namespace {

using transport::test::ChildProcess;
using transport::test::TempDir;

int keygen(const std::string& name, const std::string& dir, bool force, std::string* err = nullptr) {
  std::ostringstream out;
  std::ostringstream errors;
  const int code = runKeygen({name, dir, force}, out, errors);
  if (err != nullptr) *err = errors.str();
  return code;
}

TEST(Keygen, WritesAPairTheSecretOwnerOnlyAndRefusesToOverwrite) {
  TempDir dir;
  const std::string base = (dir.path() / "node").string();
  ASSERT_EQ(keygen("node", dir.path().string(), false), 0);
  struct stat info {};
  ASSERT_EQ(stat((base + ".key_secret").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  const transport::CurveKeyPair secret = transport::loadCurveCertificate(base + ".key_secret");
  EXPECT_EQ(transport::loadCurveCertificate(base + ".key").publicKey, secret.publicKey);
  EXPECT_EQ(secret.secretKey.size(), 40u);

  std::string err;
  EXPECT_EQ(keygen("node", dir.path().string(), false, &err), kFailedExitCode);
  EXPECT_NE(err.find("--force"), std::string::npos) << err;
  EXPECT_EQ(transport::loadCurveCertificate(base + ".key_secret").secretKey, secret.secretKey);

  // A secret file another user could read is replaced, not reused with its permissions.
  chmod((base + ".key_secret").c_str(), 0644);
  ASSERT_EQ(keygen("node", dir.path().string(), true), 0);
  ASSERT_EQ(stat((base + ".key_secret").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  EXPECT_NE(transport::loadCurveCertificate(base + ".key_secret").secretKey, secret.secretKey);
}

TEST(Keygen, ABadNameIsAUsageError) {
  TempDir dir;
  for (const char* name : {"", "a/b", ".hidden", ".."}) {
    std::string err;
    EXPECT_EQ(keygen(name, dir.path().string(), false, &err), kUsageExitCode) << name;
    EXPECT_NE(err.find("NAME"), std::string::npos) << err;
  }
}

TEST(LivemonctlCurve, MissingCertificatesAreUsageErrors) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"tail", "tcp://127.0.0.1:5555", "--curve-server", "/nonexistent/server.key"},
           {"relay", "--curve-allow", "/nonexistent"},
           {"relay", "--curve-allow-publish", "/nonexistent"},
           {"relay", "--curve-allow-publish", "/tmp"},  // without --curve-secret
           {"demo", "--curve-secret", "/nonexistent/x.key_secret"},
           {"keygen"},
           {"keygen", "x", "--dir", "/nonexistent"}}) {
    std::vector<std::string> argv{livemonctlPath()};
    argv.insert(argv.end(), args.begin(), args.end());
    ChildProcess child(argv);
    EXPECT_EQ(child.exitCode(), kUsageExitCode) << testing::PrintToString(args);
    EXPECT_NE(child.err().find("Usage:"), std::string::npos) << child.err();
  }
}

TEST(LivemonctlCurve, RequireCurveRefusesAnExposedPlainRelay) {
  ChildProcess child({livemonctlPath(), "relay", "--listen", "tcp://0.0.0.0:*", "--serve", "tcp://127.0.0.1:*",
                      "--require-curve", "--duration", "5"});
  EXPECT_EQ(child.exitCode(), kFailedExitCode);
  EXPECT_NE(child.err().find("refusing to bind tcp://0.0.0.0:* without CURVE"), std::string::npos) << child.err();
}

TEST(LivemonctlCurve, TailReadsASecuredDemoWithOptionsOrEnvironment) {
  TempDir dir;
  const std::string d = dir.path().string();
  ASSERT_EQ(mkdir((dir.path() / "allow").c_str(), 0700), 0);
  ASSERT_EQ(keygen("server", d, false), 0);
  ASSERT_EQ(keygen("laptop", d + "/allow", false), 0);
  ChildProcess demo({livemonctlPath(), "demo", "--endpoint", "tcp://127.0.0.1:*", "--steps-per-second", "200",
                     "--window", "0.05", "--duration", "60", "--curve-secret", d + "/server.key_secret",
                     "--curve-allow", d + "/allow"});
  // "publishing on tcp://127.0.0.1:PORT" and the rest of the line (not std::regex: GCC 12 warns
  // inside it in the sanitizer build).
  std::string endpoint;
  ASSERT_TRUE(demo.readStdoutUntil([&](const std::string& out) {
    const std::size_t at = out.find("publishing on tcp://");
    if (at == std::string::npos) return false;
    const std::size_t begin = at + std::string("publishing on ").size();
    const std::size_t end = out.find_first_of(" \t\r\n", begin);
    if (end == std::string::npos) return false;  // the line is not complete yet
    endpoint = out.substr(begin, end - begin);
    return true;
  })) << demo.out() << demo.err();

  ChildProcess withOptions({livemonctlPath(), "tail", endpoint, "--count", "5", "--curve-server", d + "/server.key",
                            "--curve-client", d + "/allow/laptop.key_secret"});
  EXPECT_EQ(withOptions.exitCode(), 0) << withOptions.err();
  EXPECT_GE(std::count(withOptions.out().begin(), withOptions.out().end(), '\n'), 5) << withOptions.out();

  setenv(std::string(transport::kCurveServerEnvironmentVariable).c_str(), (d + "/server.key").c_str(), 1);
  setenv(std::string(transport::kCurveClientEnvironmentVariable).c_str(), (d + "/allow/laptop.key_secret").c_str(), 1);
  ChildProcess withEnvironment({livemonctlPath(), "tail", endpoint, "--count", "5"});
  unsetenv(std::string(transport::kCurveServerEnvironmentVariable).c_str());
  unsetenv(std::string(transport::kCurveClientEnvironmentVariable).c_str());
  EXPECT_EQ(withEnvironment.exitCode(), 0) << withEnvironment.err();

  // Refused connections say why, at once, instead of leaving the user waiting in silence.
  const auto says = [](ChildProcess& tail, const std::string& why) {
    const bool said = tail.readStderrUntil([&](const std::string& err) { return err.find(why) != std::string::npos; });
    tail.signal(SIGINT);
    return said;
  };
  ChildProcess withoutKeys({livemonctlPath(), "tail", endpoint});
  EXPECT_TRUE(says(withoutKeys, "CURVE")) << withoutKeys.err();
  EXPECT_NE(withoutKeys.err().find("livemonctl tail: " + endpoint + ": "), std::string::npos) << withoutKeys.err();
  ChildProcess notAllowed({livemonctlPath(), "tail", endpoint, "--curve-server", d + "/server.key", "--curve-client",
                           d + "/server.key_secret"});
  EXPECT_TRUE(says(notAllowed, "refused: this side's key is not in the publisher's allow list")) << notAllowed.err();
  ChildProcess wrongServer({livemonctlPath(), "tail", endpoint, "--curve-server", d + "/allow/laptop.key",
                            "--curve-client", d + "/allow/laptop.key_secret"});
  EXPECT_TRUE(says(wrongServer, "is the server certificate (--curve-server) the publisher's?")) << wrongServer.err();
}

TEST(LivemonctlCurve, ARelayAdmitsPublishersFromAListOfTheirOwn) {
  TempDir dir;
  const std::string d = dir.path().string();
  ASSERT_EQ(mkdir((dir.path() / "watch").c_str(), 0700), 0);
  ASSERT_EQ(mkdir((dir.path() / "publish").c_str(), 0700), 0);
  ASSERT_EQ(keygen("server", d, false), 0);
  ASSERT_EQ(keygen("laptop", d + "/watch", false), 0);
  ASSERT_EQ(keygen("rank0", d + "/publish", false), 0);
  // The publish list from its environment variable, the watch list from its option.
  setenv(std::string(transport::kCurveAllowPublishEnvironmentVariable).c_str(), (d + "/publish").c_str(), 1);
  std::unique_ptr<ChildProcess> relay;
  const auto endpoints = transport::test::startRelay(
      livemonctlPath(), relay, {"--curve-secret", d + "/server.key_secret", "--curve-allow", d + "/watch"});
  unsetenv(std::string(transport::kCurveAllowPublishEnvironmentVariable).c_str());
  ASSERT_TRUE(endpoints) << relay->out() << relay->err();
  ASSERT_TRUE(relay->readStdoutUntil([&](const std::string& out) {
    return out.find("CURVE: publishers admitted from " + d + "/publish, watchers (serve, history) from " + d +
                    "/watch") != std::string::npos;
  })) << relay->out();

  const auto publisher = [&](const std::string& run, const std::string& secret) {
    transport::PublisherOptions options = transport::test::testPublisherOptions();
    options.bind.clear();
    options.connect = {endpoints->listen};
    options.handleLoggedEvents = false;
    options.runName = run;
    options.curve = {secret, "", d + "/server.key", false};
    return std::make_unique<transport::Publisher>(options);
  };
  const auto rank = publisher("rank", d + "/publish/rank0.key_secret");
  const auto watcherPublishing = publisher("laptop", d + "/watch/laptop.key_secret");
  transport::SubscriberOptions watching = transport::test::connectTo({endpoints->serve});
  watching.curve = {d + "/watch/laptop.key_secret", "", d + "/server.key", false};
  transport::Subscriber subscriber(watching);
  std::map<std::string, int> byRun;
  transport::SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](transport::ReceivedEvent& e) { ++byRun[e.source->run]; };
  ASSERT_TRUE(transport::test::waitForSource(subscriber, rank->identity()));
  EXPECT_TRUE(transport::test::pollUntil(subscriber, callbacks, [&] {
    for (transport::Publisher* p : {rank.get(), watcherPublishing.get()}) {
      p->publish(transport::test::makeEvent("curve.test", {{"x", 1.0}}));
    }
    return byRun["rank"] >= 20;
  }));
  EXPECT_EQ(byRun.count("laptop"), 0u);
  relay->signal(SIGINT);
  EXPECT_EQ(relay->exitCode(), 0) << relay->err();
  EXPECT_NE(relay->out().find("refused "), std::string::npos) << relay->out();
}

}  // namespace
}  // namespace livemon::livemonctl
