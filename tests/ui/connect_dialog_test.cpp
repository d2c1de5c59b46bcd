// The Connect dialog: what it adds and what it refuses, with the reason shown, and a host lookup
// that leaves the dialog responsive.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>

#include <QLabel>
#include <QListWidget>
#include <QString>

#include <livemon/transport/relay.h>

#include <livemon/ui/dashboard/endpoint_check.h>
#include <livemon/ui/ingest/ingest_worker.h>
#include <livemon/ui/widgets/connect_dialog.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using namespace std::chrono_literals;
using test::waitFor;

// ".invalid" never resolves (RFC 6761), with or without a network.
TEST(ConnectDialog, AHostThatDoesNotResolveIsRefusedWithTheReason) {
  IngestWorker ingest(IngestWorker::Options{});
  ConnectDialog dialog(ingest);
  const QString bad = QStringLiteral("tcp://no-such-host.invalid:5555");
  EXPECT_EQ(dialog.addEndpoint(bad), ConnectDialog::AddResult::Resolving);
  ASSERT_TRUE(waitFor([&] { return !dialog.isChecking(); }));
  EXPECT_FALSE(dialog.endpoints().contains(bad));
  EXPECT_TRUE(ingest.endpoints().empty());
  EXPECT_TRUE(dialog.errorText().contains(QStringLiteral("no-such-host.invalid"))) << dialog.errorText().toStdString();
}

TEST(ConnectDialog, BadSyntaxIsRefusedAtOnceAndAnAddressIsAddedAtOnce) {
  IngestWorker ingest(IngestWorker::Options{});
  ConnectDialog dialog(ingest);
  EXPECT_EQ(dialog.addEndpoint(QStringLiteral("gpu-node-3:5555")), ConnectDialog::AddResult::Refused);
  EXPECT_TRUE(dialog.errorText().contains(QStringLiteral("tcp://"))) << dialog.errorText().toStdString();
  EXPECT_EQ(dialog.addEndpoint(QStringLiteral("tcp://gpu-node-3")), ConnectDialog::AddResult::Refused);
  EXPECT_TRUE(dialog.errorText().contains(QStringLiteral("port"))) << dialog.errorText().toStdString();
  EXPECT_FALSE(dialog.isChecking());
  EXPECT_TRUE(ingest.endpoints().empty());

  EXPECT_EQ(dialog.addEndpoint(QStringLiteral("tcp://127.0.0.1:5601")), ConnectDialog::AddResult::Added);
  EXPECT_EQ(dialog.endpoints(), QStringList{QStringLiteral("tcp://127.0.0.1:5601")});
  EXPECT_TRUE(dialog.errorText().isEmpty());
}

TEST(ConnectDialog, AHostThatResolvesIsAddedWhenTheLookupEnds) {
  IngestWorker ingest(IngestWorker::Options{});
  std::function<void(const QString&)> answer;
  ConnectDialog dialog(ingest, nullptr, EndpointChecker::kDefaultTimeout,
                       [&](const QString&, QObject*, std::function<void(const QString&)> done) { answer = std::move(done); });
  int changes = 0;
  QObject::connect(&dialog, &ConnectDialog::endpointsChanged, [&] { ++changes; });
  const QString endpoint = QStringLiteral("tcp://gpu-node-3:5555");
  EXPECT_EQ(dialog.addEndpoint(endpoint), ConnectDialog::AddResult::Resolving);
  EXPECT_TRUE(dialog.isChecking());
  EXPECT_TRUE(dialog.endpoints().isEmpty());
  ASSERT_TRUE(answer);
  answer(QString());
  EXPECT_FALSE(dialog.isChecking());
  EXPECT_EQ(dialog.endpoints(), QStringList{endpoint});
  EXPECT_EQ(changes, 1);
}

TEST(ConnectDialog, ALookupThatNeverAnswersIsGivenUpAfterTheTimeout) {
  IngestWorker ingest(IngestWorker::Options{});
  ConnectDialog dialog(ingest, nullptr, 20ms, [](const QString&, QObject*, std::function<void(const QString&)>) {});
  EXPECT_EQ(dialog.addEndpoint(QStringLiteral("tcp://slow-dns:5555")), ConnectDialog::AddResult::Resolving);
  ASSERT_TRUE(waitFor([&] { return !dialog.isChecking(); }));
  EXPECT_TRUE(dialog.endpoints().isEmpty());
  EXPECT_TRUE(dialog.errorText().contains(QStringLiteral("slow-dns"))) << dialog.errorText().toStdString();
}

// A relay reports itself as a source a moment after the dashboard connects: the dialog's list then
// marks its endpoint "relay", and the endpoint itself is still what the dialog adds and removes.
TEST(ConnectDialog, AnEndpointWhereARelayReportsIsMarkedRelay) {
  transport::RelayOptions relayOptions;
  relayOptions.listen = "tcp://127.0.0.1:*";
  relayOptions.serve = "tcp://127.0.0.1:*";
  relayOptions.reportInterval = 50ms;
  transport::Relay relay(relayOptions);
  const QString serve = QString::fromStdString(relay.serveEndpoint());

  IngestWorker ingest(IngestWorker::Options{});
  ingest.start();
  ConnectDialog dialog(ingest);
  EXPECT_TRUE(dialog.addEndpoint(QStringLiteral("tcp://127.0.0.1:5602")) == ConnectDialog::AddResult::Added);
  EXPECT_TRUE(dialog.addEndpoint(serve) == ConnectDialog::AddResult::Added);
  EXPECT_TRUE(dialog.relayEndpoints().isEmpty());
  ASSERT_TRUE(waitFor([&] {
    dialog.markRelays();
    return !dialog.relayEndpoints().isEmpty();
  }));
  EXPECT_EQ(dialog.relayEndpoints(), QStringList{serve});
  EXPECT_EQ(dialog.endpoints(), (QStringList{QStringLiteral("tcp://127.0.0.1:5602"), serve}));
  const auto* list = dialog.findChild<QListWidget*>();
  ASSERT_NE(list, nullptr);
  EXPECT_EQ(list->item(1)->text(), serve + QStringLiteral(" — relay"));
  EXPECT_EQ(list->item(0)->text(), QStringLiteral("tcp://127.0.0.1:5602"));

  EXPECT_TRUE(dialog.removeEndpoint(serve));
  EXPECT_EQ(dialog.endpoints(), QStringList{QStringLiteral("tcp://127.0.0.1:5602")});
  EXPECT_TRUE(dialog.relayEndpoints().isEmpty());
  ingest.stop();
}

TEST(ConnectDialog, TheHintShowsHowToReachARelay) {
  IngestWorker ingest(IngestWorker::Options{});
  ConnectDialog dialog(ingest);
  bool shown = false;
  for (const QLabel* label : dialog.findChildren<QLabel*>()) {
    shown = shown || label->text().contains(QStringLiteral("livemonctl relay --serve"));
  }
  EXPECT_TRUE(shown);
}

}  // namespace
}  // namespace livemon::ui
