#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <QString>
#include <QStringList>
#include <QtCharts/QLineSeries>
#include <QtTest/QTest>

#include <livemon/event.h>
#include <livemon/transport/subscriber.h>
#include <livemon/ui/ingest_batch.h>

namespace livemon::ui::test {

// Generous: a loaded 2-core machine is slow, and a condition that holds returns at once anyway.
inline constexpr std::chrono::seconds kDeadline{30};

// Processes events until `condition` holds or the deadline passes; returns whether it holds.
inline bool waitFor(const std::function<bool()>& condition, std::chrono::milliseconds deadline = kDeadline) {
  return QTest::qWaitFor(condition, static_cast<int>(deadline.count()));
}

inline std::shared_ptr<const transport::SourceInfo> makeSource(std::string run, int64_t pid,
                                                               std::optional<int64_t> rank = std::nullopt,
                                                               double startMs = 1'700'000'000'000.0) {
  transport::SourceInfo info;
  info.run = std::move(run);
  info.host = "host";
  info.pid = pid;
  info.rank = rank;
  info.instanceId = static_cast<uint64_t>(pid) * 7919U;
  info.startTime = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double, std::milli>(startMs)));
  return std::make_shared<const transport::SourceInfo>(std::move(info));
}

inline std::chrono::system_clock::time_point atMs(double ms) {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double, std::milli>(ms)));
}

inline transport::ReceivedEvent received(std::shared_ptr<const transport::SourceInfo> source, Event event) {
  transport::ReceivedEvent r;
  r.event = std::move(event);
  r.source = std::move(source);
  r.endpoint = std::make_shared<const std::string>("tcp://127.0.0.1:5555");
  return r;
}

inline std::optional<double> lastY(const QLineSeries* series) {
  if (series == nullptr || series->count() == 0) return std::nullopt;
  return series->at(series->count() - 1).y();
}

// Collects what QAbstractItemModelTester reports in FailureReportingMode::Warning (warnings in
// category qt.modeltest), for the duration of its life.
class ModelTesterMessages {
 public:
  ModelTesterMessages() {
    messages().clear();
    previous_ = qInstallMessageHandler(&ModelTesterMessages::handle);
  }
  ~ModelTesterMessages() { qInstallMessageHandler(previous_); }
  ModelTesterMessages(const ModelTesterMessages&) = delete;
  ModelTesterMessages& operator=(const ModelTesterMessages&) = delete;

  static QStringList& messages() {
    static QStringList collected;
    return collected;
  }
  static std::string text() { return messages().join(QLatin1Char('\n')).toStdString(); }

 private:
  static void handle(QtMsgType, const QMessageLogContext& context, const QString& message) {
    if (context.category != nullptr && QString::fromLatin1(context.category) == QLatin1String("qt.modeltest")) {
      messages() << message;
    }
  }
  QtMessageHandler previous_ = nullptr;
};

}  // namespace livemon::ui::test
