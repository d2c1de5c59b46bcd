// The alert rules on the dashboard's ingest thread, without a widget: what a real publisher sends
// (a PayloadPublisher, so the test writes each event, heartbeat and goodbye) raises alerts through
// Dashboard::alertRaised, each listed once and logged once as a "livemon.alert" row, with an
// injected clock wherever silence is measured.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <limits>
#include <string>

#include <QSignalSpy>
#include <QTemporaryDir>

#include <livemon/clock.h>
#include <livemon/transport/payload_publisher.h>
#include <livemon/transport/wire_format.h>
#include <livemon/ui/dashboard/dashboard.h>
#include <livemon/ui/ingest/alert_feed.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using namespace std::chrono_literals;
using test::waitFor;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

transport::SourceInfo sourceNamed(std::string run, uint64_t id) {
  transport::SourceInfo source;
  source.run = std::move(run);
  source.host = "node";
  source.pid = 99;
  source.instanceId = id;
  source.startTime = transport::fromWireTime(1'700'000'000'000'000'000);
  return source;
}

// A publisher whose every message the test writes.
class HandMadePublisher {
 public:
  HandMadePublisher() : publisher_(options()) {}
  const std::string& endpoint() const { return publisher_.endpoints()[0]; }
  bool waitForSubscriber() {
    std::atomic<bool> never{false};
    return publisher_.waitForSubscriber(test::kDeadline, never);
  }
  void event(const transport::SourceInfo& source, uint64_t sequence, const std::string& name, DataValue value) {
    const std::vector<Event> events{Event{name, std::chrono::system_clock::now(), {{"v", std::move(value)}}}};
    ASSERT_TRUE(publisher_.send(name, transport::encodeEventsPayload(source, sequence, name, events)));
  }
  void heartbeat(const transport::SourceInfo& source, uint64_t sequence,
                 transport::MessageKind kind = transport::MessageKind::Heartbeat) {
    transport::PublisherCounters counters;
    counters.timestamp = std::chrono::system_clock::now();
    counters.interval = 1000ms;
    ASSERT_TRUE(publisher_.send(transport::kHeartbeatTopic, transport::encodeHeartbeatPayload(kind, source, sequence, counters)));
  }

 private:
  static transport::PayloadPublisherOptions options() {
    transport::PayloadPublisherOptions o;
    o.bind = {"tcp://127.0.0.1:*"};
    o.linger = 0ms;
    return o;
  }
  transport::PayloadPublisher publisher_;
};

// The log rows named `name`.
int logRowsNamed(EventLogModel& log, const QString& name) {
  int rows = 0;
  for (int row = 0; row < log.rowCount(); ++row) {
    rows += log.data(log.index(row, EventLogModel::NameColumn)).toString() == name ? 1 : 0;
  }
  return rows;
}

int alertsOfKind(AlertListModel& alerts, const QString& kind) {
  int count = 0;
  for (int row = 0; row < alerts.rowCount(); ++row) count += alerts.entry(row)->kind == kind ? 1 : 0;
  return count;
}

class DashboardAlertsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(dir_.isValid()); }

  DashboardOptions options() {
    DashboardOptions result;
    result.endpoints = {publisher_.endpoint()};
    result.exactEndpoints = true;
    result.settingsFile = dir_.filePath(QStringLiteral("livemon.ini"));
    result.ingestClock = &clock_;
    result.refreshInterval = 10ms;
    // The hand-made publisher advertises no history: fetching one would hold its events back
    // until the injected clock passed SubscriberOptions::historyWait.
    result.history = false;
    return result;
  }

  QTemporaryDir dir_;
  HandMadePublisher publisher_;
  ManualClock clock_;
};

TEST_F(DashboardAlertsTest, ANaNRaisesOneAlertAndOneLogLineAfterItsEvent) {
  Dashboard dashboard(options());
  QSignalSpy raised(&dashboard.alertCentre(), &AlertCentre::alertRaised);
  // When the alert is told, the event that raised it is already in the log.
  int logRowsWhenRaised = -1;
  QObject::connect(&dashboard.alertCentre(), &AlertCentre::alertRaised, &dashboard,
                   [&] { logRowsWhenRaised = logRowsNamed(dashboard.eventLog(), QStringLiteral("train")); });
  dashboard.start();
  ASSERT_TRUE(publisher_.waitForSubscriber());
  const transport::SourceInfo job = sourceNamed("job", 1);
  publisher_.event(job, 0, "train", 1.5);
  publisher_.event(job, 1, "train", kNaN);
  publisher_.event(job, 2, "train", kNaN);  // still NaN: not a new alert
  publisher_.event(job, 3, "done", 1.0);
  ASSERT_TRUE(waitFor([&] { return logRowsNamed(dashboard.eventLog(), QStringLiteral("done")) == 1; }));

  ASSERT_EQ(raised.count(), 1);
  EXPECT_GE(logRowsWhenRaised, 2);
  ASSERT_EQ(dashboard.alertCentre().alerts().rowCount(), 1);
  const AlertEntry& alert = *dashboard.alertCentre().alerts().entry(0);
  EXPECT_EQ(alert.kind, QStringLiteral("nan"));
  EXPECT_EQ(alert.rule, QStringLiteral("nan"));
  EXPECT_EQ(alert.key, QStringLiteral("train.v"));
  EXPECT_TRUE(std::isnan(alert.value));
  EXPECT_EQ(alert.source, QStringLiteral("job"));
  EXPECT_EQ(logRowsNamed(dashboard.eventLog(), QString::fromUtf8(kAlertEventName.data())), 1);
  EXPECT_EQ(dashboard.eventLog().rowCount(), 5);  // four events and the alert's line
  // The alert's line comes after the NaN that raised it (row 1); "done" may come before or after
  // it, as the two travel separately from the ingest thread. Its fields are text: it charts nothing.
  int alertRow = -1;
  for (int row = 0; row < 5; ++row) {
    if (dashboard.eventLog().rowsAsText({row}).contains(QStringLiteral("train.v is NaN"))) alertRow = row;
  }
  EXPECT_GE(alertRow, 2) << dashboard.eventLog().rowsAsText({0, 1, 2, 3, 4}).toStdString();
}

TEST_F(DashboardAlertsTest, ASourceThatVanishesWithoutGoodbyeIsSilentOnce) {
  Dashboard dashboard(options());
  dashboard.start();
  ASSERT_TRUE(publisher_.waitForSubscriber());
  const transport::SourceInfo vanishing = sourceNamed("vanishing", 1);
  publisher_.heartbeat(vanishing, 0);
  publisher_.event(vanishing, 0, "hello", 1.0);
  ASSERT_TRUE(waitFor([&] { return logRowsNamed(dashboard.eventLog(), QStringLiteral("hello")) == 1; }));
  EXPECT_EQ(dashboard.alertCentre().alerts().rowCount(), 0);
  // No heartbeat, no goodbye: the job was killed. Five heartbeat intervals of 1 s are allowed.
  clock_.advance(6s);
  ASSERT_TRUE(waitFor([&] { return alertsOfKind(dashboard.alertCentre().alerts(), QStringLiteral("silent")) == 1; }));
  const AlertEntry& alert = *dashboard.alertCentre().alerts().entry(0);
  EXPECT_EQ(alert.source, QStringLiteral("vanishing"));
  EXPECT_EQ(alert.rule, QStringLiteral("silent"));
  EXPECT_TRUE(alert.message.contains(QStringLiteral("without a goodbye"))) << alert.message.toStdString();
  ASSERT_TRUE(waitFor([&] { return logRowsNamed(dashboard.eventLog(), QString::fromUtf8(kAlertEventName.data())) == 1; }));

  // Once per silence: more silence says nothing new; another source's alert marks the end.
  clock_.advance(60s);
  const transport::SourceInfo other = sourceNamed("other", 2);
  publisher_.event(other, 0, "gate", kNaN);
  ASSERT_TRUE(waitFor([&] { return alertsOfKind(dashboard.alertCentre().alerts(), QStringLiteral("nan")) == 1; }));
  EXPECT_EQ(alertsOfKind(dashboard.alertCentre().alerts(), QStringLiteral("silent")), 1);
}

TEST_F(DashboardAlertsTest, AGoodbyeIsNotSilence) {
  Dashboard dashboard(options());
  dashboard.start();
  ASSERT_TRUE(publisher_.waitForSubscriber());
  const transport::SourceInfo leaving = sourceNamed("leaving", 1);
  publisher_.event(leaving, 0, "first", 1.0);
  publisher_.heartbeat(leaving, 0, transport::MessageKind::Goodbye);
  ASSERT_TRUE(waitFor([&] { return logRowsNamed(dashboard.eventLog(), QStringLiteral("first")) == 1; }));
  clock_.advance(1h);
  const transport::SourceInfo other = sourceNamed("other", 2);
  publisher_.event(other, 0, "gate", kNaN);
  ASSERT_TRUE(waitFor([&] { return alertsOfKind(dashboard.alertCentre().alerts(), QStringLiteral("nan")) == 1; }));
  // The silence check runs at least every 100 ms of real time: give it a few rounds.
  const auto until = std::chrono::steady_clock::now() + 500ms;
  waitFor([&] { return std::chrono::steady_clock::now() > until; }, 2s);
  EXPECT_EQ(alertsOfKind(dashboard.alertCentre().alerts(), QStringLiteral("silent")), 0);
}

TEST_F(DashboardAlertsTest, AUserRuleFiresAfterNConsecutiveValuesAndIsSavedForNextTime) {
  {
    Dashboard dashboard(options());
    QString error;
    EXPECT_FALSE(dashboard.alertCentre().addRule(QStringLiteral("train.v >> 3"), &error));
    EXPECT_TRUE(error.contains(QStringLiteral("train.v >> 3"))) << error.toStdString();
    ASSERT_TRUE(dashboard.alertCentre().addRule(QStringLiteral("train.v > 10 for 2"), &error)) << error.toStdString();
    ASSERT_TRUE(dashboard.alertCentre().addRule(QStringLiteral("eval.v < 0.5")));
    EXPECT_TRUE(dashboard.alertCentre().addRule(QStringLiteral("eval.v < 0.5")));  // not twice
    EXPECT_EQ(dashboard.alertCentre().rules(), (QStringList{QStringLiteral("train.v > 10 for 2"), QStringLiteral("eval.v < 0.5")}));
    EXPECT_TRUE(dashboard.alertCentre().removeRule(QStringLiteral("eval.v < 0.5")));
    EXPECT_FALSE(dashboard.alertCentre().removeRule(QStringLiteral("eval.v < 0.5")));
  }
  // A new dashboard on the same settings restores the rule and runs it.
  Dashboard dashboard(options());
  EXPECT_EQ(dashboard.alertCentre().rules(), QStringList{QStringLiteral("train.v > 10 for 2")});
  dashboard.start();
  ASSERT_TRUE(publisher_.waitForSubscriber());
  const transport::SourceInfo job = sourceNamed("job", 1);
  publisher_.event(job, 0, "train", 11.0);
  publisher_.event(job, 1, "train", 5.0);
  publisher_.event(job, 2, "train", 12.0);
  publisher_.event(job, 3, "train", 13.0);  // the second in a row
  publisher_.event(job, 4, "done", 1.0);
  ASSERT_TRUE(waitFor([&] { return logRowsNamed(dashboard.eventLog(), QStringLiteral("done")) == 1; }));
  ASSERT_EQ(dashboard.alertCentre().alerts().rowCount(), 1);
  const AlertEntry& alert = *dashboard.alertCentre().alerts().entry(0);
  EXPECT_EQ(alert.rule, QStringLiteral("train.v > 10 for 2"));
  EXPECT_EQ(alert.kind, QStringLiteral("threshold"));
  EXPECT_EQ(alert.value, 13.0);
}

}  // namespace
}  // namespace livemon::ui
