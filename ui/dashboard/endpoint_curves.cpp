#include <livemon/ui/dashboard/endpoint_curves.h>

#include <algorithm>

#include <QSettings>
#include <QString>
#include <QStringList>

namespace livemon::ui {

namespace {

const QString kEndpointCurveKey = QStringLiteral("endpointCurve");
const QString kEndpoint = QStringLiteral("endpoint");
const QString kServer = QStringLiteral("serverCertificate");
const QString kClient = QStringLiteral("clientCertificate");
// Settings files are edited by hand too: what is read stays small.
constexpr int kMaxRemembered = 256;

}  // namespace

std::map<std::string, transport::CurveOptions> loadEndpointCurves(QSettings& store) {
  std::map<std::string, transport::CurveOptions> curves;
  const int count = std::min(store.beginReadArray(kEndpointCurveKey), kMaxRemembered);
  for (int i = 0; i < count; ++i) {
    store.setArrayIndex(i);
    const QString endpoint = store.value(kEndpoint).toString();
    const QString server = store.value(kServer).toString();
    const QString client = store.value(kClient).toString();
    if (endpoint.isEmpty() || server.isEmpty() || client.isEmpty()) continue;
    curves[endpoint.toStdString()] = transport::CurveOptions{client.toStdString(), "", server.toStdString(), false};
  }
  store.endArray();
  return curves;
}

void saveEndpointCurves(QSettings& settings, const std::map<std::string, transport::CurveOptions>& curves) {
  settings.remove(kEndpointCurveKey);
  if (curves.empty()) return;
  settings.beginWriteArray(kEndpointCurveKey, static_cast<int>(curves.size()));
  int i = 0;
  for (const auto& [endpoint, curve] : curves) {
    settings.setArrayIndex(i++);
    settings.setValue(kEndpoint, QString::fromStdString(endpoint));
    settings.setValue(kServer, QString::fromStdString(curve.serverCertificate));
    settings.setValue(kClient, QString::fromStdString(curve.certificate));
  }
  settings.endArray();
}

}  // namespace livemon::ui
