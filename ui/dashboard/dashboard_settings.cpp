#include <livemon/ui/dashboard/dashboard_settings.h>

#include <algorithm>

#include <QSettings>
#include <QVariantMap>

namespace livemon::ui {

namespace {

namespace keys {
const QString kEndpoints = QStringLiteral("endpoints");
const QString kEndpointCurve = QStringLiteral("endpointCurve");
const QString kCurveEndpoint = QStringLiteral("endpoint");  // within an endpointCurve entry
const QString kCurveServer = QStringLiteral("serverCertificate");
const QString kCurveClient = QStringLiteral("clientCertificate");
const QString kHistory = QStringLiteral("ingest/history");
const QString kAlertRules = QStringLiteral("alerts/rules");
const QString kBaselineFollow = QStringLiteral("baseline/followLive");
const QString kGeometry = QStringLiteral("window/geometry");
const QString kState = QStringLiteral("window/state");
const QString kSplitter = QStringLiteral("window/splitter");
const QString kTimeRange = QStringLiteral("view/timeRange");
const QString kTimeAxis = QStringLiteral("view/xAxis");
const QString kView = QStringLiteral("view/tab");
const QString kAutoScroll = QStringLiteral("log/autoScroll");
const QString kStatWindows = QStringLiteral("log/statWindows");
const QString kTheme = QStringLiteral("view/theme");
const QString kRecordingFolder = QStringLiteral("recordings/folder");
const QString kPinned = QStringLiteral("charts/pinned");
const QString kCollapsed = QStringLiteral("charts/collapsed");
const QString kSmoothing = QStringLiteral("charts/smoothing");
const QString kLogAll = QStringLiteral("charts/logScaleAll");
const QString kLogPerChart = QStringLiteral("charts/logScale");
const QString kRunColours = QStringLiteral("runs/colours");
const QString kRunSummaryKeys = QStringLiteral("runs/summaryKeys");
const QString kRunBestIsMax = QStringLiteral("runs/bestIsMax");
}  // namespace keys

std::unique_ptr<QSettings> openSettings(const QString& file) {
  if (file.isEmpty()) return std::make_unique<QSettings>(QStringLiteral("livemon"), QStringLiteral("livemon"));
  return std::make_unique<QSettings>(file, QSettings::IniFormat);
}

QStringList listOf(const std::set<QString>& names) {
  QStringList list;
  list.reserve(static_cast<qsizetype>(names.size()));
  for (const QString& name : names) list << name;
  return list;
}

std::set<QString> chartNames(const QStringList& list) {
  std::set<QString> names;
  for (const QString& name : list) {
    if (static_cast<qsizetype>(names.size()) >= kMaxSavedChartChoices) break;
    if (name.size() <= kMaxSavedChartNameLength) names.insert(name);  // "" is a section: "other"
  }
  return names;
}

}  // namespace

QString dashboardViewKey(DashboardView view) {
  switch (view) {
    case DashboardView::Ranges:
      return QStringLiteral("ranges");
    case DashboardView::Ranks:
      return QStringLiteral("ranks");
    case DashboardView::Charts:
      break;
  }
  return QStringLiteral("charts");
}

DashboardView dashboardViewFromKey(const QString& key) {
  if (key == QLatin1String("ranges")) return DashboardView::Ranges;
  if (key == QLatin1String("ranks")) return DashboardView::Ranks;
  return DashboardView::Charts;
}

DashboardSettings::DashboardSettings(const QString& file) : store_(openSettings(file)) {}

DashboardSettings::~DashboardSettings() = default;

std::vector<std::string> DashboardSettings::endpoints() const {
  std::vector<std::string> saved;
  for (const QString& endpoint : store_->value(keys::kEndpoints).toStringList()) {
    if (!endpoint.trimmed().isEmpty()) saved.push_back(endpoint.trimmed().toStdString());
  }
  return saved;
}

void DashboardSettings::setEndpoints(const QStringList& endpoints) { store_->setValue(keys::kEndpoints, endpoints); }

std::map<std::string, transport::CurveOptions> DashboardSettings::endpointCurves() const {
  std::map<std::string, transport::CurveOptions> curves;
  // Reading an array moves the store's position, and puts it back at the end.
  const int count = std::min(store_->beginReadArray(keys::kEndpointCurve), kMaxSavedEndpointCurves);
  for (int i = 0; i < count; ++i) {
    store_->setArrayIndex(i);
    const QString endpoint = store_->value(keys::kCurveEndpoint).toString();
    const QString server = store_->value(keys::kCurveServer).toString();
    const QString client = store_->value(keys::kCurveClient).toString();
    if (endpoint.isEmpty() || server.isEmpty() || client.isEmpty()) continue;
    curves[endpoint.toStdString()] = transport::CurveOptions{client.toStdString(), "", server.toStdString(), false};
  }
  store_->endArray();
  return curves;
}

void DashboardSettings::setEndpointCurves(const std::map<std::string, transport::CurveOptions>& curves) {
  store_->remove(keys::kEndpointCurve);
  if (curves.empty()) return;
  store_->beginWriteArray(keys::kEndpointCurve, static_cast<int>(curves.size()));
  int i = 0;
  for (const auto& [endpoint, curve] : curves) {
    store_->setArrayIndex(i++);
    store_->setValue(keys::kCurveEndpoint, QString::fromStdString(endpoint));
    store_->setValue(keys::kCurveServer, QString::fromStdString(curve.serverCertificate));
    store_->setValue(keys::kCurveClient, QString::fromStdString(curve.certificate));
  }
  store_->endArray();
}

bool DashboardSettings::fetchHistory() const { return store_->value(keys::kHistory, true).toBool(); }

void DashboardSettings::setFetchHistory(bool fetch) { store_->setValue(keys::kHistory, fetch); }

QStringList DashboardSettings::alertRules() const { return store_->value(keys::kAlertRules).toStringList(); }

void DashboardSettings::setAlertRules(const QStringList& rules) { store_->setValue(keys::kAlertRules, rules); }

bool DashboardSettings::baselinesFollowLive() const { return store_->value(keys::kBaselineFollow, false).toBool(); }

void DashboardSettings::setBaselinesFollowLive(bool follow) { store_->setValue(keys::kBaselineFollow, follow); }

DashboardSettings::WindowLayout DashboardSettings::windowLayout() const {
  return WindowLayout{store_->value(keys::kGeometry).toByteArray(), store_->value(keys::kState).toByteArray(),
                      store_->value(keys::kSplitter).toByteArray()};
}

void DashboardSettings::setWindowLayout(const WindowLayout& layout) {
  store_->setValue(keys::kGeometry, layout.geometry);
  store_->setValue(keys::kState, layout.state);
  store_->setValue(keys::kSplitter, layout.splitter);
}

std::optional<TimeRange> DashboardSettings::timeRange() const {
  return timeRangeFromKey(store_->value(keys::kTimeRange).toString());
}

void DashboardSettings::setTimeRange(TimeRange range) { store_->setValue(keys::kTimeRange, timeRangeKey(range)); }

std::optional<TimeAxisMode> DashboardSettings::timeAxisMode() const {
  return timeAxisModeFromKey(store_->value(keys::kTimeAxis).toString());
}

void DashboardSettings::setTimeAxisMode(TimeAxisMode mode) { store_->setValue(keys::kTimeAxis, timeAxisModeKey(mode)); }

DashboardView DashboardSettings::view() const { return dashboardViewFromKey(store_->value(keys::kView).toString()); }

void DashboardSettings::setView(DashboardView view) { store_->setValue(keys::kView, dashboardViewKey(view)); }

bool DashboardSettings::logAutoScroll() const { return store_->value(keys::kAutoScroll, true).toBool(); }

void DashboardSettings::setLogAutoScroll(bool on) { store_->setValue(keys::kAutoScroll, on); }

bool DashboardSettings::logShowsStatWindows() const { return store_->value(keys::kStatWindows, false).toBool(); }

void DashboardSettings::setLogShowsStatWindows(bool show) { store_->setValue(keys::kStatWindows, show); }

QString DashboardSettings::theme() const { return store_->value(keys::kTheme).toString(); }

void DashboardSettings::setTheme(const QString& theme) { store_->setValue(keys::kTheme, theme); }

QString DashboardSettings::recordingFolder() const { return store_->value(keys::kRecordingFolder).toString(); }

void DashboardSettings::setRecordingFolder(const QString& folder) { store_->setValue(keys::kRecordingFolder, folder); }

ChartChoices DashboardSettings::chartChoices() const {
  ChartChoices choices;
  choices.pinned = chartNames(store_->value(keys::kPinned).toStringList());
  choices.collapsed = chartNames(store_->value(keys::kCollapsed).toStringList());
  return choices;
}

void DashboardSettings::setChartChoices(const ChartChoices& choices) {
  store_->setValue(keys::kPinned, listOf(choices.pinned));
  store_->setValue(keys::kCollapsed, listOf(choices.collapsed));
}

ChartViewState DashboardSettings::chartView() const {
  ChartViewState state;
  bool ok = false;
  const double weight = store_->value(keys::kSmoothing, kDefaultSmoothing).toDouble(&ok);
  if (ok) state.smoothing = weight;
  state.logScaleAll = store_->value(keys::kLogAll, false).toBool();
  const QVariantMap perChart = store_->value(keys::kLogPerChart).toMap();
  for (auto it = perChart.begin(); it != perChart.end() && state.logScale.size() < kMaxSavedLogScaleCharts; ++it) {
    if (it.value().toBool() != state.logScaleAll) state.logScale[it.key()] = it.value().toBool();
  }
  return state;
}

void DashboardSettings::setChartView(const ChartViewState& state) {
  store_->setValue(keys::kSmoothing, state.smoothing);
  store_->setValue(keys::kLogAll, state.logScaleAll);
  QVariantMap perChart;
  for (const auto& [name, on] : state.logScale) perChart.insert(name, on);
  store_->setValue(keys::kLogPerChart, perChart);
}

std::map<QString, unsigned> DashboardSettings::runColours() const {
  std::map<QString, unsigned> colours;
  const QVariantMap saved = store_->value(keys::kRunColours).toMap();
  for (auto it = saved.begin(); it != saved.end() && colours.size() < kMaxSavedRunColours; ++it) {
    bool ok = false;
    const unsigned index = it.value().toUInt(&ok);
    if (ok && it.key().size() <= kMaxSavedRunNameLength) colours[it.key()] = index;
  }
  return colours;
}

void DashboardSettings::setRunColours(const std::map<QString, unsigned>& colours) {
  QVariantMap saved;
  for (const auto& [run, index] : colours) {
    if (static_cast<std::size_t>(saved.size()) >= kMaxSavedRunColours) break;
    if (run.size() <= kMaxSavedRunNameLength) saved.insert(run, index);
  }
  store_->setValue(keys::kRunColours, saved);
}

QStringList DashboardSettings::runSummaryKeys() const {
  QStringList keys = store_->value(keys::kRunSummaryKeys).toStringList();
  keys.erase(std::remove_if(keys.begin(), keys.end(), [](const QString& key) { return key.size() > kMaxSavedChartNameLength; }),
             keys.end());
  if (keys.size() > 64) keys.resize(64);
  return keys;
}

void DashboardSettings::setRunSummaryKeys(const QStringList& keys) { store_->setValue(keys::kRunSummaryKeys, keys); }

bool DashboardSettings::runBestIsMax() const { return store_->value(keys::kRunBestIsMax, false).toBool(); }

void DashboardSettings::setRunBestIsMax(bool max) { store_->setValue(keys::kRunBestIsMax, max); }

void DashboardSettings::sync() { store_->sync(); }

}  // namespace livemon::ui
