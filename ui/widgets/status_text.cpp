#include <livemon/ui/widgets/status_text.h>

#include <QColor>
#include <QCoreApplication>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QStringList>
#include <QTextDocument>

#include <livemon/transport/recording.h>
#include <livemon/ui/widgets/dashboard_style.h>

namespace livemon::ui {

namespace {

QString tr(const char* text, int n = -1) { return QCoreApplication::translate("livemon::ui::MainWindow", text, nullptr, n); }

QString number(uint64_t value) { return QLocale().toString(static_cast<qulonglong>(value)); }

QString stateColour(EndpointState state) {
  switch (state) {
    case EndpointState::Connected:
      return QColor(colours::good()).name();
    case EndpointState::Finished:
    case EndpointState::Waiting:
      return QColor(colours::dimText()).name();
    case EndpointState::Silent:
    case EndpointState::Unreachable:
    case EndpointState::Refused:
      break;
  }
  return QColor(colours::bad()).name();
}

QString formatRate(double perSecond) {
  if (perSecond >= 10'000) return QStringLiteral("%1k").arg(perSecond / 1000.0, 0, 'f', 0);
  if (perSecond >= 1'000) return QStringLiteral("%1k").arg(perSecond / 1000.0, 0, 'f', 1);
  return QString::number(perSecond, 'f', 0);
}

}  // namespace

QString standingNote(std::size_t endpoints, const QString& replayPath, const QString& folder) {
  if (endpoints > 0) return {};
  if (!replayPath.isEmpty()) return tr("Replaying %1").arg(replayPath);
  if (!folder.isEmpty()) return tr("Showing the runs in %1").arg(folder);
  return tr("Not connected: add an endpoint with Connect…");
}

QString refusedNote(const std::vector<EndpointHealth>& endpoints) {
  QStringList lines;
  for (const EndpointHealth& health : endpoints) {
    if (health.state != EndpointState::Refused) continue;
    lines << QStringLiteral("%1: %2").arg(QString::fromStdString(health.endpoint), QString::fromStdString(health.handshakeError));
  }
  return lines.join(QLatin1Char('\n'));
}

namespace {

// Spelled out: there is no translator to pick "source" or "sources" from "%n source(s)".
QString sourcesText(std::size_t count) { return count == 1 ? tr("1 source") : tr("%1 sources").arg(number(count)); }

// "● relay tcp://head:5555 · 256 sources · 3 stale": the state shows in the dot's colour, and in
// words unless all is well.
QString summaryHead(const EndpointHealth& health) {
  const QString colour = stateColour(health.state);
  QString text = QStringLiteral("<span style='color:%1'>&#9679;</span> ").arg(colour);
  if (health.relays > 0) text += tr("relay") + QLatin1Char(' ');
  text += QString::fromStdString(health.endpoint).toHtmlEscaped();
  if (health.state != EndpointState::Connected) {
    text += QStringLiteral(" <span style='color:%1'>%2</span>")
                .arg(colour, QString::fromUtf8(endpointStateName(health.state).data()));
  }
  text += QStringLiteral(" · ") + sourcesText(health.publishers());
  const QString stale = tr("%1 stale").arg(number(health.staleSources));
  text += QStringLiteral(" · ") +
          (health.staleSources > 0 ? QStringLiteral("<span style='color:%1'>%2</span>").arg(QColor(colours::warn()).name(), stale)
                                   : stale);
  return text;
}

}  // namespace

QString describeHealth(const EndpointHealth& health) {
  const QLocale locale;
  QString text = health.summarized()
                     ? summaryHead(health)
                     : QStringLiteral("<span style='color:%1'>&#9679;</span> %2 <span style='color:%1'>%3</span>")
                           .arg(stateColour(health.state), QString::fromStdString(health.endpoint).toHtmlEscaped(),
                                QString::fromUtf8(endpointStateName(health.state).data()));
  text += QStringLiteral(" · %1 ev/s").arg(formatRate(health.eventsPerSecond));
  const QString warn = QColor(colours::warn()).name();
  if (health.gaps > 0) {
    text += QStringLiteral(" · <span style='color:%1'>%2 gaps (%3 missed)</span>")
                .arg(warn, locale.toString(static_cast<qulonglong>(health.gaps)),
                     locale.toString(static_cast<qulonglong>(health.missedEvents)));
  } else {
    text += QStringLiteral(" · no gaps");
  }
  if (health.publisherDrops > 0) {
    text += QStringLiteral(" · <span style='color:%1'>%2 dropped by publisher</span>")
                .arg(warn, locale.toString(static_cast<qulonglong>(health.publisherDrops)));
  }
  if (health.protocolErrors > 0) {
    text += QStringLiteral(" · <span style='color:%1'>%2 reconnects after protocol errors</span>")
                .arg(warn, locale.toString(static_cast<qulonglong>(health.protocolErrors)));
  }
  if (!health.handshakeError.empty()) {
    text += QStringLiteral(" · <span style='color:%1'>%2</span>")
                .arg(warn, QString::fromStdString(health.handshakeError).toHtmlEscaped());
  }
  return text;
}

namespace {

QString describeHealthDetails(const EndpointHealth& health) {
  QString meaning;
  switch (health.state) {
    case EndpointState::Connected:
      meaning = tr("A publisher here was heard within the last few seconds.");
      break;
    case EndpointState::Silent:
      meaning = tr("A publisher here stopped sending without saying goodbye: it crashed, hangs, or the network "
                   "between is cut.");
      break;
    case EndpointState::Finished:
      meaning = tr("Every publisher here said goodbye: the run ended normally.");
      break;
    case EndpointState::Waiting:
      meaning = tr("Nothing heard yet; listening for a publisher.");
      break;
    case EndpointState::Unreachable:
      meaning = tr("Nothing heard and no connection: no publisher runs there yet, or the host cannot be reached.");
      break;
    case EndpointState::Refused:
      meaning = tr("A publisher answers here but its security handshake failed; the reason follows the "
                   "endpoint. The dashboard keeps trying, and gets in once the publisher allows its key.");
      break;
  }
  if (!health.summarized()) {
    return meaning + QLatin1Char('\n') + tr("%n publisher(s) last heard here", static_cast<int>(health.sources));
  }
  QString details = meaning + QLatin1Char('\n');
  if (health.relays > 0) {
    details += tr("A relay: %1 reach the dashboard through it (relays heard here, chained ones included: %2)")
                   .arg(sourcesText(health.publishers()), number(health.relays));
  } else {
    details += tr("%n publisher(s) last heard here", static_cast<int>(health.sources));
  }
  if (health.staleSources == 0) return details;
  QStringList names;
  for (const std::string& name : health.staleNames) names << QString::fromStdString(name);
  details += QLatin1Char('\n') + tr("Not heard from within their stale window: %1").arg(names.join(QStringLiteral(", ")));
  if (health.staleSources > health.staleNames.size()) {
    details += tr(" and %1 more").arg(number(health.staleSources - health.staleNames.size()));
  }
  return details;
}

}  // namespace

QString describeHealthToolTip(const EndpointHealth& health) {
  QString details = describeHealthDetails(health);
  if (!health.history.empty()) details += QLatin1Char('\n') + QString::fromStdString(health.history);
  return details;
}

void showEndpointHealth(QHBoxLayout& labels, const std::vector<EndpointHealth>& health) {
  // One label per endpoint, reused while the list stays the same length.
  while (labels.count() > static_cast<int>(health.size())) {
    QLayoutItem* item = labels.takeAt(labels.count() - 1);
    delete item->widget();
    delete item;
  }
  while (labels.count() < static_cast<int>(health.size())) {
    auto* label = new QLabel(labels.parentWidget());
    label->setTextFormat(Qt::RichText);
    labels.addWidget(label);
  }
  for (std::size_t i = 0; i < health.size(); ++i) {
    auto* label = qobject_cast<QLabel*>(labels.itemAt(static_cast<int>(i))->widget());
    label->setText(describeHealth(health[i]));
    // Source names come off the network: escaped, so a run named "<img src=…>" stays text.
    label->setToolTip(Qt::convertFromPlainText(describeHealthToolTip(health[i]), Qt::WhiteSpaceNormal));
  }
}

StatusText recordingStatusText(const IngestWorker::RecordingStatus& status) {
  StatusText result;
  if (!status.active) return result;
  const QString path = QString::fromStdString(status.path);
  result.text = QStringLiteral("<span style='color:%1'>&#9679;</span> %2 · %3 · %4 events")
                    .arg(QColor(colours::bad()).name(), QFileInfo(path).fileName().toHtmlEscaped(),
                         QLocale().formattedDataSize(static_cast<qint64>(status.bytes)), number(status.events));
  result.toolTip = path;
  if (status.notRecorded > 0) {
    result.text += tr(" · %1 not recorded").arg(number(status.notRecorded));
    result.toolTip = tr("%1\nEvents of more than %2 distinct names are not recorded.")
                         .arg(path, number(transport::kMaxRecordingChannels));
  }
  return result;
}

StatusText summaryStatusText(const transport::SubscriberStats& stats, uint64_t droppedByDashboard,
                             std::size_t charts, std::optional<std::size_t> heldLogRows) {
  StatusText result;
  result.text = tr("%n chart(s)", static_cast<int>(charts));
  if (heldLogRows) result.text = tr("Paused (%1 log rows held)").arg(number(*heldLogRows)) + QStringLiteral(" · ") + result.text;
  const uint64_t bad = stats.malformed + stats.oversized + stats.unsupported;
  if (bad > 0) result.text += tr(" · %1 bad messages skipped").arg(number(bad));
  // Beyond the subscriber's limits: gaps on what it forgot go uncounted until heard again.
  const uint64_t forgotten = stats.topicsEvicted + stats.sourcesEvicted;
  if (forgotten > 0) result.text += tr(" · %1 topics or sources forgotten").arg(number(forgotten));
  // Events whose numbers a message with other bytes had claimed: a peer posing as a source.
  if (stats.conflicts > 0) result.text += tr(" · %1 conflicting events").arg(number(stats.conflicts));
  if (droppedByDashboard > 0) result.text += tr(" · %1 dropped by the dashboard").arg(number(droppedByDashboard));
  if (!stats.lastError.empty()) result.toolTip = tr("Last bad message: %1").arg(QString::fromStdString(stats.lastError));
  return result;
}

}  // namespace livemon::ui
