#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <QString>
#include <QStringList>
#include <QtTest/QTest>

#include <livemon/event.h>
#include <livemon/transport/subscriber.h>
#include <livemon/ui/data/ingest_batch.h>

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

// The y of a chart line's last point (a QLineSeries; a template, so tests without charts need no Qt
// Charts).
template <typename Series>
std::optional<double> lastY(const Series* series) {
  if (series == nullptr || series->count() == 0) return std::nullopt;
  return series->at(series->count() - 1).y();
}

// The durations, in milliseconds, of one window of a range Stat.
struct RangeTimings {
  double count = 0;
  double mean = 0;
  double p50 = 0;
  double p99 = 0;
  double max = 0;
};

// Adds the keys a profiler's range Stat "range/<name>" logs for one window.
inline void addRangeWindow(std::unordered_map<std::string, DataValue>& data, const std::string& name,
                           const RangeTimings& t) {
  const std::string stat = "range/" + name;
  data[stat + ".count"] = t.count;
  data[stat + ".mean"] = t.mean;
  data[stat + ".p50"] = t.p50;
  data[stat + ".p99"] = t.p99;
  data[stat + ".max"] = t.max;
}

// Collects Qt's warnings (and worse) for the duration of its life: every one, or only those of one
// logging category. One collector at a time.
class QtWarnings {
 public:
  explicit QtWarnings(const char* category = nullptr) {
    messages().clear();
    wantedCategory() = category;
    previous_ = qInstallMessageHandler(&QtWarnings::handle);
  }
  ~QtWarnings() { qInstallMessageHandler(previous_); }
  QtWarnings(const QtWarnings&) = delete;
  QtWarnings& operator=(const QtWarnings&) = delete;

  static QStringList& messages() {
    static QStringList collected;
    return collected;
  }
  static std::string text() { return messages().join(QLatin1Char('\n')).toStdString(); }

 private:
  static const char*& wantedCategory() {
    static const char* category = nullptr;
    return category;
  }
  static void handle(QtMsgType type, const QMessageLogContext& context, const QString& message) {
    if (type == QtDebugMsg || type == QtInfoMsg) return;
    const char* wanted = wantedCategory();
    if (wanted != nullptr && (context.category == nullptr || std::strcmp(context.category, wanted) != 0)) return;
    messages() << message;
  }
  QtMessageHandler previous_ = nullptr;
};

// What QAbstractItemModelTester reports in FailureReportingMode::Warning: warnings in category
// qt.modeltest.
class ModelTesterMessages : public QtWarnings {
 public:
  ModelTesterMessages() : QtWarnings("qt.modeltest") {}
};

}  // namespace livemon::ui::test
