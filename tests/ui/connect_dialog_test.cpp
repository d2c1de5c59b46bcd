// The Connect dialog: what it adds and what it refuses, with the reason shown, and a host lookup
// that leaves the dialog responsive.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>

#include <QLabel>
#include <QListWidget>
#include <QString>

#include <QDir>
#include <QTemporaryDir>

#include <fstream>

#include <livemon/transport/curve.h>
#include <livemon/transport/publisher.h>
#include <livemon/transport/relay.h>

#include <livemon/ui/dashboard/endpoint_check.h>
#include <livemon/ui/dashboard/dashboard_settings.h>
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

// Keys for a CURVE test: a publisher's pair and a client in its allow list.
struct CurveKeys {
  QTemporaryDir dir;
  std::string path(const char* name) const { return (dir.path() + QLatin1Char('/') + QLatin1String(name)).toStdString(); }
  CurveKeys() {
    QDir(dir.path()).mkdir(QStringLiteral("allow"));
    const transport::CurveKeyPair server = transport::generateCurveKeyPair();
    const transport::CurveKeyPair client = transport::generateCurveKeyPair();
    std::ofstream(path("server.key")) << transport::curveCertificateText(server, false);
    std::ofstream(path("server.key_secret")) << transport::curveCertificateText(server, true);
    std::ofstream(path("allow/laptop.key")) << transport::curveCertificateText(client, false);
    std::ofstream(path("laptop.key_secret")) << transport::curveCertificateText(client, true);
  }
};

TEST(ConnectDialog, WithCertificatesAnEndpointIsReachedOverCurve) {
  CurveKeys keys;
  transport::PublisherOptions publisherOptions;
  publisherOptions.bind = {"tcp://127.0.0.1:*"};
  publisherOptions.heartbeatInterval = 20ms;
  publisherOptions.runName = "secured";
  publisherOptions.curve = {keys.path("server.key_secret"), keys.path("allow"), "", false};
  transport::Publisher publisher(publisherOptions);
  const QString endpoint = QString::fromStdString(publisher.endpoints().front());

  IngestWorker::Options options;
  options.curve = {};
  IngestWorker ingest(options);
  ingest.start();
  ConnectDialog dialog(ingest);
  dialog.setCertificates(QString::fromStdString(keys.path("server.key")), QString());
  EXPECT_EQ(dialog.addEndpoint(endpoint), ConnectDialog::AddResult::Refused);
  EXPECT_TRUE(dialog.errorText().contains(QStringLiteral("NAME.key_secret"))) << dialog.errorText().toStdString();
  dialog.setCertificates(QString::fromStdString(keys.path("server.key")), QString::fromStdString(keys.path("missing")));
  EXPECT_EQ(dialog.addEndpoint(endpoint), ConnectDialog::AddResult::Refused);
  EXPECT_TRUE(dialog.errorText().contains(QStringLiteral("missing"))) << dialog.errorText().toStdString();
  EXPECT_TRUE(ingest.endpoints().empty());

  dialog.setCertificates(QString::fromStdString(keys.path("server.key")),
                         QString::fromStdString(keys.path("laptop.key_secret")));
  ASSERT_EQ(dialog.addEndpoint(endpoint), ConnectDialog::AddResult::Added) << dialog.errorText().toStdString();
  ASSERT_TRUE(waitFor([&] {
    for (const transport::SourceStatus& source : ingest.sources()) {
      if (source.source->run == "secured") return true;
    }
    return false;
  }));
  ASSERT_EQ(ingest.endpointCurves().size(), 1u);
  EXPECT_EQ(ingest.endpointCurves().begin()->second.serverCertificate, keys.path("server.key"));
  EXPECT_EQ(publisher.stats().curveRefused, 0u);
  ingest.stop();
}

TEST(ConnectDialog, EndpointCertificatesAreRememberedAsPathsOnly) {
  QTemporaryDir dir;
  const QString file = dir.path() + QStringLiteral("/settings.ini");
  std::map<std::string, transport::CurveOptions> curves;
  curves["tcp://head:5555"] = {"/keys/laptop.key_secret", "", "/keys/head.key", false};
  DashboardSettings(file).setEndpointCurves(curves);
  const auto loaded = DashboardSettings(file).endpointCurves();
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_EQ(loaded.at("tcp://head:5555").certificate, "/keys/laptop.key_secret");
  EXPECT_EQ(loaded.at("tcp://head:5555").serverCertificate, "/keys/head.key");
  std::ifstream text(file.toStdString());
  const std::string saved((std::istreambuf_iterator<char>(text)), std::istreambuf_iterator<char>());
  EXPECT_NE(saved.find("/keys/head.key"), std::string::npos);
  EXPECT_EQ(saved.find("secret-key"), std::string::npos);
}

}  // namespace
}  // namespace livemon::ui
