// CURVE on livemon's sockets: certificates, who is admitted by a publisher and a relay, refusals
// counted, the allow list read again, and the options' errors.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include <livemon/transport/curve.h>
#include <livemon/transport/error.h>
#include <livemon/transport/payload_publisher.h>
#include <livemon/transport/publisher.h>
#include <livemon/transport/relay.h>
#include <livemon/transport/subscriber.h>

#include "curve_fixture.h"
#include "test_support.h"

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;
using test::Counted;
using test::Fixture;
using test::Keys;
using test::TempDir;
using test::writeFile;

std::string errorOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::exception& error) {
    return error.what();
  }
  return "no error";
}

TEST(CurveCertificate, WhatKeygenWritesReadsBack) {
  TempDir dir;
  const Keys keys(dir.path(), "node");
  const CurveKeyPair secret = loadCurveCertificate(keys.secretFile);
  EXPECT_EQ(secret.publicKey, keys.pair.publicKey);
  EXPECT_EQ(secret.secretKey, keys.pair.secretKey);
  const CurveKeyPair pub = loadCurveCertificate(keys.publicFile);
  EXPECT_EQ(pub.publicKey, keys.pair.publicKey);
  EXPECT_TRUE(pub.secretKey.empty());
}

TEST(CurveCertificate, ReadsZeroMQCertificatesOfOtherWriters) {
  TempDir dir;
  const CurveKeyPair keys = generateCurveKeyPair();
  // czmq's zcert layout with Windows line ends, single quotes and metadata of its own.
  writeFile(dir.path() / "other.key", "#   ZeroMQ CURVE Public Certificate\r\n\r\nmetadata\r\n    name = 'laptop'\r\ncurve\r\n"
                                      "    public-key = '" + keys.publicKey + "'\r\n");
  EXPECT_EQ(loadCurveCertificate((dir.path() / "other.key").string()).publicKey, keys.publicKey);
}

TEST(CurveCertificate, MalformedOnesNameTheFileAndTheLine) {
  TempDir dir;
  const CurveKeyPair keys = generateCurveKeyPair();
  const auto errorFor = [&](const std::string& text) {
    const std::string path = (dir.path() / "bad.key").string();
    writeFile(path, text);
    return errorOf([&] { loadCurveCertificate(path); });
  };
  const std::string head = "metadata\ncurve\n";
  EXPECT_NE(errorFor(head + "    public-key = \"" + keys.publicKey.substr(1) + "\"\n").find("bad.key: line 3: the key is not 40 Z85"),
            std::string::npos);
  EXPECT_NE(errorFor(head + "    public-key = \"" + keys.publicKey.substr(1) + "~\"\n").find("line 3: the key is not 40 Z85"),
            std::string::npos);
  // Five Z85 digits beyond four bytes ("%%%%%" is 85^5 - 1).
  EXPECT_NE(errorFor(head + "    public-key = \"%%%%%" + keys.publicKey.substr(5) + "\"\n").find("line 3"),
            std::string::npos);
  EXPECT_NE(errorFor(head + "    public-key = \"" + keys.publicKey + "\n").find("line 3: the key's closing quote"),
            std::string::npos);
  EXPECT_NE(errorFor(head + "public-key = \"" + keys.publicKey + "\"\npublic-key = \"" + keys.publicKey + "\"\n")
                .find("line 4: the key appears twice"),
            std::string::npos);
  EXPECT_NE(errorFor("# nothing here\n").find("bad.key: no public-key"), std::string::npos);
  EXPECT_NE(errorFor(std::string(20000, '#')).find("bad.key: larger than 16384 bytes"), std::string::npos);
  EXPECT_NE(errorOf([&] { loadCurveCertificate(dir.path().string()); }).find("not a regular file"), std::string::npos);
  EXPECT_NE(errorOf([&] { loadCurveCertificate((dir.path() / "missing.key").string()); }).find("missing.key"),
            std::string::npos);
}

TEST(CurveOptionsTest, MistakesAreNamed) {
  Fixture keys;
  PublisherOptions options = test::testPublisherOptions();
  options.curve = {keys.server.secretFile, "", "", false};
  EXPECT_NE(errorOf([&] { Publisher publisher(options); }).find("needs curve.allow"), std::string::npos);
  options.curve = {keys.server.publicFile, keys.allow.string(), "", false};
  EXPECT_NE(errorOf([&] { Publisher publisher(options); }).find("no secret-key"), std::string::npos);
  options.curve = {keys.server.secretFile, (keys.temp.path() / "nowhere").string(), "", false};
  EXPECT_NE(errorOf([&] { Publisher publisher(options); }).find("nowhere"), std::string::npos);
  options.curve = {"", keys.allow.string(), "", false};
  EXPECT_NE(errorOf([&] { Publisher publisher(options); }).find("need curve.certificate"), std::string::npos);

  SubscriberOptions subscriber = test::connectTo({"tcp://127.0.0.1:5999"});
  subscriber.curve = {keys.client.secretFile, "", "", false};
  EXPECT_NE(errorOf([&] { Subscriber s(subscriber); }).find("needs curve.serverCertificate"), std::string::npos);

  // A secret certificate whose public key belongs to another pair.
  const CurveKeyPair other = generateCurveKeyPair();
  const std::string mixed = (keys.temp.path() / "mixed.key_secret").string();
  writeFile(mixed, curveCertificateText({other.publicKey, keys.server.pair.secretKey}, true));
  options.curve = {mixed, keys.allow.string(), "", false};
  EXPECT_NE(errorOf([&] { Publisher publisher(options); }).find("does not belong"), std::string::npos);
}

// Ranks need no change to their code: a default PublisherOptions (and SubscriberOptions) takes
// its CURVE settings from the environment.
TEST(CurveOptionsTest, DefaultsComeFromTheEnvironment) {
  Fixture keys;
  setenv("LIVEMON_CURVE_SECRET", keys.server.secretFile.c_str(), 1);
  setenv("LIVEMON_CURVE_ALLOW", keys.allow.c_str(), 1);
  setenv("LIVEMON_CURVE_CLIENT", keys.client.secretFile.c_str(), 1);
  setenv("LIVEMON_CURVE_SERVER", keys.server.publicFile.c_str(), 1);
  setenv("LIVEMON_REQUIRE_CURVE", "1", 1);
  PublisherOptions publisherOptions = test::testPublisherOptions();
  SubscriberOptions subscriberOptions;
  for (const char* name : {"LIVEMON_CURVE_SECRET", "LIVEMON_CURVE_ALLOW", "LIVEMON_CURVE_CLIENT", "LIVEMON_CURVE_SERVER",
                           "LIVEMON_REQUIRE_CURVE"}) {
    unsetenv(name);
  }
  EXPECT_EQ(publisherOptions.curve.certificate, keys.server.secretFile);
  EXPECT_EQ(publisherOptions.curve.allow, keys.allow.string());
  EXPECT_TRUE(publisherOptions.curve.require);
  EXPECT_EQ(subscriberOptions.curve.certificate, keys.client.secretFile);
  EXPECT_EQ(subscriberOptions.curve.serverCertificate, keys.server.publicFile);

  Publisher publisher(publisherOptions);
  subscriberOptions.connect = publisher.endpoints();
  Subscriber subscriber(subscriberOptions);
  // Only a publisher that took the server's key from the environment admits this subscriber.
  EXPECT_TRUE(test::waitForSource(subscriber, publisher.identity()));
}

TEST(CurveOptionsTest, RequireRefusesAnExposedPlainEndpointAndAllowsLoopback) {
  PublisherOptions options = test::testPublisherOptions("tcp://0.0.0.0:*");
  options.curve.require = true;
  EXPECT_THROW(Publisher publisher(options), TransportError);
  options.bind = {"tcp://127.0.0.1:*"};
  EXPECT_NO_THROW(Publisher publisher(options));
}

TEST(CurveOptionsTest, AnExposedPlainEndpointWarnsOnce) {
  testing::internal::CaptureStderr();
  {
    Publisher first(test::testPublisherOptions("tcp://0.0.0.0:*"));
    Publisher second(test::testPublisherOptions("tcp://0.0.0.0:*"));
  }
  const std::string err = testing::internal::GetCapturedStderr();
  const std::size_t at = err.find("without CURVE: anyone who can reach it can read every event");
  ASSERT_NE(at, std::string::npos) << err;
  EXPECT_EQ(err.find("without CURVE", at + 1), std::string::npos) << err;
}

TEST(CurvePublisher, AdmitsOnlyAllowedSubscribersAndCountsRefusals) {
  Fixture keys;
  Publisher publisher(keys.publisherOptions());
  const std::string endpoint = publisher.endpoints().front();

  Subscriber allowed(keys.subscriberOptions(endpoint, keys.client));
  Subscriber stranger(keys.subscriberOptions(endpoint, keys.stranger));
  SubscriberOptions plainOptions = test::connectTo({endpoint});
  plainOptions.curve = {};
  Subscriber plain(plainOptions);
  // The right client key but the wrong server key: the handshake cannot succeed.
  SubscriberOptions wrongServerOptions = test::connectTo({endpoint});
  wrongServerOptions.curve = {keys.client.secretFile, "", keys.stranger.publicFile, false};
  Subscriber wrongServer(wrongServerOptions);

  Counted allowedCount, strangerCount, plainCount, wrongCount;
  ASSERT_TRUE(test::waitForSource(allowed, publisher.identity()));
  ASSERT_TRUE(test::waitUntil([&] { return publisher.stats().curveRefused >= 1; }));
  // Whatever reached the others would have been sent by now; the allowed one gets all of it.
  ASSERT_TRUE(test::pollUntil(allowed, allowedCount.callbacks(), [&] {
    publisher.publish(test::makeEvent("curve.test", {{"x", 1.0}}));
    stranger.poll(0ms, strangerCount.callbacks());
    plain.poll(0ms, plainCount.callbacks());
    wrongServer.poll(0ms, wrongCount.callbacks());
    return allowedCount.events >= 20;
  }));
  EXPECT_EQ(strangerCount.events, 0u);
  EXPECT_EQ(plainCount.events, 0u);
  EXPECT_EQ(wrongCount.events, 0u);
  EXPECT_EQ(stranger.stats().messages + plain.stats().messages + wrongServer.stats().messages, 0u);
  EXPECT_EQ(allowed.stats().missedEvents, 0u);
}

TEST(CurvePublisher, ReadsTheAllowListAgainWhenItChanges) {
  Fixture keys;
  PublisherOptions options = test::testPublisherOptions();
  options.curve = keys.serverCurve();
  options.statName = "curve.pub";  // its counters as Stats, the refusals among them
  options.statWindow = 20ms;
  Publisher publisher(options);
  SubscriberOptions strangerOptions = test::connectTo({publisher.endpoints().front()});
  strangerOptions.curve = keys.clientCurve(keys.stranger);
  strangerOptions.reconnectIntervalMax = 100ms;
  Subscriber stranger(strangerOptions);
  ASSERT_TRUE(test::waitUntil([&] { return publisher.stats().curveRefused >= 1; }));
  EXPECT_TRUE(stranger.sources().empty());

  // Renamed into place, as a careful admin (or `cp` then `mv`) does.
  std::filesystem::copy_file(keys.stranger.publicFile, keys.allow / "stranger.tmp");
  std::filesystem::rename(keys.allow / "stranger.tmp", keys.allow / "stranger.key");
  EXPECT_TRUE(test::waitForSource(stranger, publisher.identity()));
  // Admitted now, it reads how often it was refused before.
  double refused = 0;
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](ReceivedEvent& e) {
    if (const auto found = e.event.data.find("curve.pub.curve_refused.value"); found != e.event.data.end()) {
      refused = std::get<double>(found->second);
    }
  };
  EXPECT_TRUE(test::pollUntil(stranger, callbacks, [&] { return refused >= 1; }));
}

TEST(CurvePublisher, AKeyCopiedOverInPlaceReplacesTheOldOne) {
  // `cp stranger.key allow/client.key` rewrites the file, not the directory: the directory's
  // modification time stays, and the list must still change.
  Fixture keys;
  Publisher publisher(keys.publisherOptions());
  const std::string endpoint = publisher.endpoints().front();
  {
    Subscriber client(keys.subscriberOptions(endpoint, keys.client));
    ASSERT_TRUE(test::waitForSource(client, publisher.identity()));
  }
  SubscriberOptions strangerOptions = keys.subscriberOptions(endpoint, keys.stranger);
  strangerOptions.reconnectIntervalMax = 100ms;
  Subscriber stranger(strangerOptions);
  ASSERT_TRUE(test::waitUntil([&] { return publisher.stats().curveRefused >= 1; }));

  const auto directoryTime = std::filesystem::last_write_time(keys.allow);
  writeFile((keys.allow / "client.key").string(), curveCertificateText(keys.stranger.pair, false));
  ASSERT_EQ(std::filesystem::last_write_time(keys.allow), directoryTime);
  EXPECT_TRUE(test::waitForSource(stranger, publisher.identity()));

  // And the key it replaced is out.
  const uint64_t refusedBefore = publisher.stats().curveRefused;
  Subscriber client(keys.subscriberOptions(endpoint, keys.client));
  EXPECT_TRUE(test::waitUntil([&] { return publisher.stats().curveRefused > refusedBefore; }));
  EXPECT_TRUE(client.sources().empty());
}

TEST(CurveSubscriber, ARefusedEndpointSaysWhyRetriesAndForgetsItOnceAdmitted) {
  Fixture keys;
  Publisher publisher(keys.publisherOptions());
  SubscriberOptions strangerOptions = keys.subscriberOptions(publisher.endpoints().front(), keys.stranger);
  strangerOptions.reconnectInterval = 50ms;
  Subscriber stranger(strangerOptions);
  const auto status = [&] { return stranger.endpoints().front(); };
  // libzmq gives up on a refused key; the subscriber tries again, and that is no protocol error.
  ASSERT_TRUE(test::pollUntil(stranger, {}, [&] { return status().handshakeFailures >= 2; }));
  EXPECT_EQ(status().handshakeError, "refused: this side's key is not in the publisher's allow list");
  EXPECT_EQ(status().protocolErrors, 0u);
  EXPECT_EQ(stranger.stats().protocolErrors, 0u);

  // Let in: the next try is admitted and the reason goes.
  std::filesystem::copy_file(keys.stranger.publicFile, keys.allow / "stranger.tmp");
  std::filesystem::rename(keys.allow / "stranger.tmp", keys.allow / "stranger.key");
  ASSERT_TRUE(test::waitForSource(stranger, publisher.identity()));
  EXPECT_EQ(status().handshakeError, "");

  // Without CURVE, the reason names it.
  Subscriber plain(test::connectTo({publisher.endpoints().front()}));
  ASSERT_TRUE(test::pollUntil(plain, {}, [&] { return plain.endpoints().front().handshakeFailures >= 1; }));
  EXPECT_NE(plain.endpoints().front().handshakeError.find("CURVE"), std::string::npos)
      << plain.endpoints().front().handshakeError;
}

TEST(CurvePublisher, ClientsWithoutCurveOrWithTheWrongServerKeyAreCountedAsRefused) {
  // They fail before the allow list is asked, so only the socket's monitor sees them. One
  // publisher each, so that one client's retries cannot stand in for the other's.
  Fixture keys;
  Publisher forPlain(keys.publisherOptions());
  Subscriber plain(test::connectTo({forPlain.endpoints().front()}));
  EXPECT_TRUE(test::pollUntil(plain, {}, [&] { return forPlain.stats().curveRefused >= 1; }));

  Publisher forWrongKey(keys.publisherOptions());
  SubscriberOptions wrongServer = test::connectTo({forWrongKey.endpoints().front()});
  wrongServer.curve = {keys.client.secretFile, "", keys.stranger.publicFile, false};
  Subscriber wrong(wrongServer);
  EXPECT_TRUE(test::pollUntil(wrong, {}, [&] { return forWrongKey.stats().curveRefused >= 1; }));
  EXPECT_TRUE(wrong.sources().empty());
}

TEST(CurvePublisher, HistoryTravelsUnderCurveToo) {
  Fixture keys;
  PublisherOptions options = test::testPublisherOptions();
  options.handleLoggedEvents = false;
  options.curve = keys.serverCurve();
  Publisher publisher(options);
  for (int i = 0; i < 5; ++i) publisher.publish(test::makeEvent("curve.test", {{"i", static_cast<double>(i)}}));
  ASSERT_TRUE(test::waitUntil([&] { return publisher.stats().historyMessages >= 1; }));

  SubscriberOptions late = test::connectTo({publisher.endpoints().front()});
  late.curve = keys.clientCurve(keys.client);
  late.history = true;
  Subscriber subscriber(late);
  Counted counted;
  std::optional<HistoryStatus> status;
  SubscriberCallbacks callbacks = counted.callbacks();
  callbacks.onHistory = [&](const HistoryStatus& s) { status = s; };
  ASSERT_TRUE(test::pollUntil(subscriber, callbacks, [&] { return status.has_value(); }));
  EXPECT_EQ(status->outcome, HistoryOutcome::Received) << status->error;
  EXPECT_EQ(counted.events, 5u);
}

TEST(CurveRelay, AForgedPublisherCannotReachSubscribers) {
  Fixture keys;
  const Keys publisherKeys(keys.allow, "rank0");
  RelayOptions relayOptions = test::loopbackRelayOptions();
  relayOptions.curve = keys.serverCurve();
  Relay relay(relayOptions);

  SubscriberOptions subscriberOptions = test::connectTo({relay.serveEndpoint()});
  subscriberOptions.curve = keys.clientCurve(keys.client);
  Subscriber subscriber(subscriberOptions);
  PublisherOptions honestOptions = test::connectedPublisherOptions(relay.listenEndpoint());
  honestOptions.handleLoggedEvents = false;
  honestOptions.runName = "honest";
  honestOptions.curve = {publisherKeys.secretFile, "", keys.server.publicFile, false};
  Publisher honest(honestOptions);
  PublisherOptions forgedOptions = honestOptions;
  forgedOptions.runName = "forged";
  forgedOptions.curve = {keys.stranger.secretFile, "", keys.server.publicFile, false};
  Publisher forged(forgedOptions);
  PublisherOptions plainOptions = honestOptions;
  plainOptions.runName = "plain";
  plainOptions.curve = {};
  Publisher plain(plainOptions);

  std::map<std::string, uint64_t> byRun;
  double reportedRefusals = 0;  // the relay's own report, as the dashboard shows it
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](ReceivedEvent& e) {
    ++byRun[e.source->run];
    if (const auto found = e.event.data.find("livemon.relay.curve_refused.value"); found != e.event.data.end()) {
      reportedRefusals = std::get<double>(found->second);
    }
  };
  ASSERT_TRUE(test::waitForSource(subscriber, honest.identity()));
  ASSERT_TRUE(test::waitUntil([&] { return relay.stats().curveRefused >= 1; }));
  ASSERT_TRUE(test::pollUntil(subscriber, callbacks, [&] {
    for (Publisher* p : {&honest, &forged, &plain}) p->publish(test::makeEvent("curve.test", {{"x", 1.0}}));
    return byRun["honest"] >= 20 && reportedRefusals >= 1;
  }));
  EXPECT_EQ(byRun.count("forged"), 0u);
  EXPECT_EQ(byRun.count("plain"), 0u);
  for (const SourceStatus& source : subscriber.sources()) {
    EXPECT_TRUE(source.source->run == "honest" || source.source->run == "relay") << source.source->run;
  }
}

// The refusals a relay counted are still there after stop(), for what `livemonctl relay` prints
// at the end; among them a watcher without keys, whose failed handshake the serve socket's guard
// counts.
TEST(CurveRelay, ItsRefusalsAreCountedAfterItStops) {
  Fixture keys;
  RelayOptions relayOptions = test::loopbackRelayOptions();
  relayOptions.curve = keys.serverCurve();
  Relay relay(relayOptions);
  Subscriber plain(test::connectTo({relay.serveEndpoint()}));
  ASSERT_TRUE(test::waitUntil([&] { return relay.stats().curveRefused >= 1; }));
  const uint64_t whileRunning = relay.stats().curveRefused;
  relay.stop();
  EXPECT_GE(relay.stats().curveRefused, whileRunning);
}

TEST(CurveSubscriber, AnEndpointMayHaveCurveSettingsOfItsOwn) {
  Fixture keys;
  PublisherOptions secured = test::testPublisherOptions();
  secured.curve = keys.serverCurve();
  Publisher securedPublisher(secured);
  Publisher plainPublisher(test::testPublisherOptions());
  SubscriberOptions options = test::connectTo({plainPublisher.endpoints().front()});
  options.curve = {};
  Subscriber subscriber(options);
  EXPECT_THROW(subscriber.addEndpoint(securedPublisher.endpoints().front(), EndpointMode::Connect,
                                      {keys.client.secretFile, "", "", false}),
               std::invalid_argument);
  subscriber.addEndpoint(securedPublisher.endpoints().front(), EndpointMode::Connect, keys.clientCurve(keys.client));
  EXPECT_TRUE(test::waitForSource(subscriber, securedPublisher.identity()));
  EXPECT_TRUE(test::waitForSource(subscriber, plainPublisher.identity()));
}

TEST(CurvePayloadPublisher, ServesOnlyAllowedSubscribers) {
  Fixture keys;
  PayloadPublisherOptions options;
  options.bind = {"tcp://127.0.0.1:*"};
  options.curve = keys.serverCurve();
  PayloadPublisher publisher(options);
  SubscriberOptions strangerOptions = test::connectTo({publisher.endpoints().front()});
  strangerOptions.curve = keys.clientCurve(keys.stranger);
  Subscriber stranger(strangerOptions);
  ASSERT_TRUE(test::waitUntil([&] { return publisher.stats().curveRefused >= 1; }));
}

}  // namespace
}  // namespace livemon::transport
