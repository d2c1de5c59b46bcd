#include <livemon/ui/data/history_note.h>

#include <chrono>

#include <QDateTime>
#include <QLocale>
#include <QObject>

namespace livemon::ui {

QString describeHistory(const HistoryNote& note) {
  if (note.outcome != transport::HistoryOutcome::Received) {
    const QString why = note.error.empty() ? QString::fromUtf8(transport::historyOutcomeName(note.outcome).data())
                                           : QString::fromStdString(note.error);
    return QObject::tr("no history: %1").arg(why);
  }
  if (note.marksBeginning()) {
    const QDateTime oldest = QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(*note.oldestMs));
    return QObject::tr("history from %1 (older not kept)").arg(oldest.toString(QStringLiteral("HH:mm:ss")));
  }
  return QObject::tr("history: received %1 events").arg(QLocale().toString(static_cast<qulonglong>(note.events)));
}

HistoryNote historyNoteFrom(const transport::HistoryStatus& status) {
  HistoryNote note;
  if (status.endpoint) note.endpoint = *status.endpoint;
  note.outcome = status.outcome;
  note.events = status.events;
  note.truncated = status.truncated;
  if (status.oldest) {
    note.oldestMs = std::chrono::duration<double, std::milli>(status.oldest->time_since_epoch()).count();
  }
  note.error = status.error;
  return note;
}

}  // namespace livemon::ui
