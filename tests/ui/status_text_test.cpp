// The status bar's lines: each endpoint's state in words and colour, and a relay or many sources
// on one endpoint summarized.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <QColor>
#include <QHBoxLayout>
#include <QLabel>
#include <QTextDocument>
#include <QWidget>

#include <livemon/ui/dashboard/endpoint_health.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/status_text.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

EndpointHealth healthWith(transport::SourceState state) {
  transport::EndpointStatus endpoint;
  endpoint.endpoint = std::make_shared<const std::string>("tcp://gpu-3:5555");
  transport::SourceStatus source;
  source.source = test::makeSource("train", 1);
  source.endpoint = endpoint.endpoint;
  source.state = state;
  return summarizeEndpoint(endpoint, {source});
}

EndpointHealth nothingHeard() {
  transport::EndpointStatus endpoint;
  endpoint.endpoint = std::make_shared<const std::string>("tcp://gpu-3:5555");
  return summarizeEndpoint(endpoint, {});
}

const QString kBad = QColor(colours::bad()).name();

// A run that said goodbye reads "finished", not in the alarm colour; an endpoint nobody answers
// on, or whose publisher went quiet without a goodbye, reads so in red.
TEST(StatusText, AFinishedRunIsNeutralWhileUnreachableAndSilentAreRed) {
  const QString finished = describeHealth(healthWith(transport::SourceState::Gone));
  EXPECT_TRUE(finished.contains(QStringLiteral("finished"))) << finished.toStdString();
  EXPECT_FALSE(finished.contains(kBad)) << finished.toStdString();

  const QString unreachable = describeHealth(nothingHeard());
  EXPECT_TRUE(unreachable.contains(QStringLiteral("unreachable"))) << unreachable.toStdString();
  EXPECT_TRUE(unreachable.contains(kBad)) << unreachable.toStdString();

  const QString silent = describeHealth(healthWith(transport::SourceState::Stale));
  EXPECT_TRUE(silent.contains(QStringLiteral("silent"))) << silent.toStdString();
  EXPECT_TRUE(silent.contains(kBad)) << silent.toStdString();

  EXPECT_FALSE(describeHealth(healthWith(transport::SourceState::Alive)).contains(kBad));
}

TEST(StatusText, ARefusedConnectionSaysWhyBesideTheEndpoint) {
  transport::EndpointStatus endpoint;
  endpoint.endpoint = std::make_shared<const std::string>("tcp://head:5555");
  endpoint.handshakeFailures = 3;
  endpoint.handshakeError = "refused: this side's key is not in the publisher's allow list";
  const EndpointHealth health = summarizeEndpoint(endpoint, {});
  EXPECT_EQ(health.state, EndpointState::Refused);
  EXPECT_TRUE(endpointStateIsTrouble(health.state));
  const QString refused = describeHealth(health);
  EXPECT_TRUE(refused.contains(QStringLiteral("refused: this side's key is not in the publisher's allow list")))
      << refused.toStdString();
  EXPECT_TRUE(refused.contains(kBad)) << refused.toStdString();

  endpoint.handshakeError.clear();  // admitted since
  EXPECT_EQ(summarizeEndpoint(endpoint, {}).state, EndpointState::Unreachable);
  EXPECT_FALSE(describeHealth(summarizeEndpoint(endpoint, {})).contains(QStringLiteral("refused")));
}

TEST(StatusText, EachStateExplainsItselfInTheTooltip) {
  EXPECT_TRUE(describeHealthToolTip(healthWith(transport::SourceState::Gone)).contains(QStringLiteral("goodbye")));
  EXPECT_TRUE(describeHealthToolTip(nothingHeard()).contains(QStringLiteral("publisher")));
}

TEST(StatusText, TheStandingLineNamesTheReplayOrHowToConnectOnlyWhileNoEndpointReports) {
  EXPECT_EQ(standingNote(0, QString()), QStringLiteral("Not connected: add an endpoint with Connect…"));
  EXPECT_EQ(standingNote(0, QStringLiteral("/runs/a.mcap")), QStringLiteral("Replaying /runs/a.mcap"));
  EXPECT_TRUE(standingNote(1, QString()).isEmpty());
  EXPECT_TRUE(standingNote(2, QStringLiteral("/runs/a.mcap")).isEmpty());
  // A folder of runs open and no live job: what is shown, not a warning.
  EXPECT_EQ(standingNote(0, QString(), QStringLiteral("/runs")), QStringLiteral("Showing the runs in /runs"));
  EXPECT_EQ(standingNote(0, QStringLiteral("/runs/a.mcap"), QStringLiteral("/runs")),
            QStringLiteral("Replaying /runs/a.mcap"));
  EXPECT_TRUE(standingNote(1, QString(), QStringLiteral("/runs")).isEmpty());
}

// 256 ranks behind a relay, 3 of them silent, and the relay reporting itself.
EndpointHealth relayWithRanks(int ranks, int stale) {
  transport::EndpointStatus endpoint;
  endpoint.endpoint = std::make_shared<const std::string>("tcp://head:5555");
  std::vector<transport::SourceStatus> sources;
  for (int rank = 0; rank < ranks; ++rank) {
    transport::SourceStatus source;
    source.source = test::makeSource("train", 100 + rank, rank);
    source.endpoint = endpoint.endpoint;
    source.state = rank < stale ? transport::SourceState::Stale : transport::SourceState::Alive;
    sources.push_back(source);
  }
  transport::SourceStatus relay;
  relay.source = test::makeSource("relay", 9);
  relay.endpoint = endpoint.endpoint;
  sources.push_back(relay);
  return summarizeEndpoint(endpoint, sources);
}

QString plain(const QString& richText) {
  QTextDocument document;
  document.setHtml(richText);
  return document.toPlainText();
}

// The status bar as shown: one label for the relay, its sources counted, the stale ones named in
// the tooltip, and the plain endpoints beside it keep their own line.
TEST(StatusText, ARelayServingManySourcesIsOneSummaryLabel) {
  QWidget bar;
  auto* labels = new QHBoxLayout(&bar);
  showEndpointHealth(*labels, {relayWithRanks(256, 3), healthWith(transport::SourceState::Alive)});
  ASSERT_EQ(labels->count(), 2);
  const auto* relay = qobject_cast<QLabel*>(labels->itemAt(0)->widget());
  ASSERT_NE(relay, nullptr);
  EXPECT_EQ(plain(relay->text()), QStringLiteral("● relay tcp://head:5555 · 256 sources · 3 stale · 0 ev/s · no gaps"))
      << relay->text().toStdString();
  EXPECT_TRUE(relay->text().contains(QColor(colours::warn()).name())) << relay->text().toStdString();
  const QString tip = plain(relay->toolTip());
  EXPECT_TRUE(tip.contains(QStringLiteral("A relay: 256 sources reach the dashboard through it"))) << tip.toStdString();
  EXPECT_TRUE(tip.contains(QStringLiteral("train@host:100 rank 0, train@host:101 rank 1, train@host:102 rank 2")))
      << tip.toStdString();
  const auto* plainEndpoint = qobject_cast<QLabel*>(labels->itemAt(1)->widget());
  EXPECT_EQ(plain(plainEndpoint->text()), QStringLiteral("● tcp://gpu-3:5555 connected · 0 ev/s · no gaps"));

  // Every rank gone quiet while the relay still reports: the count says it; the tooltip names the
  // first few and counts the rest.
  showEndpointHealth(*labels, {relayWithRanks(20, 20)});
  ASSERT_EQ(labels->count(), 1);
  const auto* quiet = qobject_cast<QLabel*>(labels->itemAt(0)->widget());
  EXPECT_EQ(plain(quiet->text()), QStringLiteral("● relay tcp://head:5555 · 20 sources · 20 stale · 0 ev/s · no gaps"));
  EXPECT_TRUE(plain(quiet->toolTip()).contains(QStringLiteral(" and 12 more"))) << quiet->toolTip().toStdString();
}

// Run names come off the network: one that looks like markup is shown as text in the tooltip.
TEST(StatusText, ASourceNamedLikeMarkupStaysTextInTheTooltip) {
  transport::EndpointStatus endpoint;
  endpoint.endpoint = std::make_shared<const std::string>("tcp://head:5555");
  std::vector<transport::SourceStatus> sources;
  for (int rank = 0; rank < 6; ++rank) {
    transport::SourceStatus source;
    source.source = test::makeSource("<img src=x>", 100 + rank, rank);
    source.endpoint = endpoint.endpoint;
    source.state = transport::SourceState::Stale;
    sources.push_back(source);
  }
  QWidget bar;
  auto* labels = new QHBoxLayout(&bar);
  showEndpointHealth(*labels, {summarizeEndpoint(endpoint, sources)});
  const QString tip = qobject_cast<QLabel*>(labels->itemAt(0)->widget())->toolTip();
  EXPECT_FALSE(tip.contains(QStringLiteral("<img"))) << tip.toStdString();
  EXPECT_TRUE(plain(tip).contains(QStringLiteral("<img src=x>@host:100 rank 0"))) << tip.toStdString();
}

TEST(StatusText, ManySourcesWithoutARelayAreSummarizedAndTheStateSaid) {
  transport::EndpointStatus endpoint;
  endpoint.endpoint = std::make_shared<const std::string>("tcp://gpu-3:5555");
  std::vector<transport::SourceStatus> sources;
  for (int rank = 0; rank < 5; ++rank) {
    transport::SourceStatus source;
    source.source = test::makeSource("train", 100 + rank, rank);
    source.endpoint = endpoint.endpoint;
    source.state = transport::SourceState::Stale;
    sources.push_back(source);
  }
  const EndpointHealth health = summarizeEndpoint(endpoint, sources);
  const QString text = describeHealth(health);
  EXPECT_EQ(plain(text), QStringLiteral("● tcp://gpu-3:5555 silent · 5 sources · 5 stale · 0 ev/s · no gaps"));
  EXPECT_TRUE(text.contains(kBad)) << text.toStdString();
  EXPECT_TRUE(describeHealthToolTip(health).contains(QStringLiteral("5 publisher(s) last heard here")));
}

}  // namespace
}  // namespace livemon::ui
