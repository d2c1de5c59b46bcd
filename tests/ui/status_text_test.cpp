// The status bar's lines: each endpoint's state in words and colour.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <QColor>

#include <livemon/ui/model/endpoint_health.h>
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

const QString kBad = QColor(colours::kBad).name();

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

TEST(StatusText, EachStateExplainsItselfInTheTooltip) {
  EXPECT_TRUE(describeHealthToolTip(healthWith(transport::SourceState::Gone)).contains(QStringLiteral("goodbye")));
  EXPECT_TRUE(describeHealthToolTip(nothingHeard()).contains(QStringLiteral("publisher")));
}

TEST(StatusText, TheStandingLineNamesTheReplayOrHowToConnectOnlyWhileNoEndpointReports) {
  EXPECT_EQ(standingNote(0, QString()), QStringLiteral("Not connected: add an endpoint with Connect…"));
  EXPECT_EQ(standingNote(0, QStringLiteral("/runs/a.mcap")), QStringLiteral("Replaying /runs/a.mcap"));
  EXPECT_TRUE(standingNote(1, QString()).isEmpty());
  EXPECT_TRUE(standingNote(2, QStringLiteral("/runs/a.mcap")).isEmpty());
}

}  // namespace
}  // namespace livemon::ui
