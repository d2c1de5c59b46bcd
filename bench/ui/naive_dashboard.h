#pragma once

// ui_ingest's reference side: a dashboard that charts the way a first attempt would.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <QDateTime>
#include <QScrollArea>
#include <QSplitter>
#include <QVBoxLayout>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QDateTimeAxis>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <livemon/transport/wire_format.h>
#include <livemon/ui/ingest/ingest_worker.h>
#include <livemon/ui/model/event_log_model.h>
#include <livemon/ui/widgets/event_log_view.h>

// GUI thread only.
//
// The naive dashboard: the same staging buffer and event log, but a QLineSeries per aggregation
// that gets every point by append(), every chart's axes moved on every tick, charts on screen or
// not.
class NaiveDashboard : public QSplitter {
 public:
  NaiveDashboard(livemon::ui::IngestWorker& ingest, std::size_t logCapacity)
      : QSplitter(Qt::Horizontal), ingest_(ingest), log_(logCapacity) {
    auto* scroll = new QScrollArea(this);
    content_ = new QWidget();
    layout_ = new QVBoxLayout(content_);
    scroll->setWidget(content_);
    scroll->setWidgetResizable(true);
    addWidget(scroll);
    logView_ = new livemon::ui::EventLogView(log_, this);
    addWidget(logView_);
    setSizes({960, 640});
  }

  void tick() {
    livemon::ui::IngestBatch batch = ingest_.staging().take();
    for (const auto& source : batch.sources) {
      log_.setSourceLabel(source.id, QString::fromStdString(livemon::transport::describe(*source.info)));
    }
    for (const auto& name : batch.names) log_.setEventName(name.id, QString::fromStdString(name.name));
    for (const auto& series : batch.series) {
      Chart*& chart = charts_[series.stat];
      if (chart == nullptr) chart = makeChart(series.stat);
      auto* line = new QLineSeries();
      line->setName(QString::fromStdString(series.aggregation));
      chart->chart->addSeries(line);
      line->attachAxis(chart->x);
      line->attachAxis(chart->y);
      if (lines_.size() <= series.id) lines_.resize(series.id + 1);
      lines_[series.id] = {chart, line};
    }
    for (const auto& sample : batch.samples) {
      if (sample.series >= lines_.size() || lines_[sample.series].second == nullptr) continue;
      auto [chart, line] = lines_[sample.series];
      line->append(sample.x, sample.y);
      chart->yMin = std::min(chart->yMin, sample.y);
      chart->yMax = std::max(chart->yMax, sample.y);
      newest_ = std::max(newest_, sample.x);
    }
    if (!batch.log.empty()) {
      log_.append(std::move(batch.log));
      logView_->rowsAppended();
    }
    for (auto& [name, chart] : charts_) {
      if (chart->yMin > chart->yMax) continue;
      chart->x->setRange(QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(newest_ - 300'000.0)),
                         QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(newest_)));
      chart->y->setRange(chart->yMin, chart->yMax);
    }
  }

  int chartCount() const { return static_cast<int>(charts_.size()); }
  const livemon::ui::EventLogModel& log() const { return log_; }

 private:
  struct Chart {
    QChart* chart = nullptr;
    QDateTimeAxis* x = nullptr;
    QValueAxis* y = nullptr;
    double yMin = INFINITY;
    double yMax = -INFINITY;
  };

  Chart* makeChart(const std::string& stat) {
    auto chart = std::make_unique<Chart>();
    chart->chart = new QChart();
    chart->chart->setTitle(QString::fromStdString(stat));
    chart->x = new QDateTimeAxis();
    chart->x->setFormat(QStringLiteral("HH:mm:ss"));
    chart->y = new QValueAxis();
    chart->chart->addAxis(chart->x, Qt::AlignBottom);
    chart->chart->addAxis(chart->y, Qt::AlignLeft);
    auto* view = new QChartView(chart->chart, content_);
    view->setRenderHint(QPainter::Antialiasing);
    view->setFixedHeight(270);
    layout_->addWidget(view);
    owned_.push_back(std::move(chart));
    return owned_.back().get();
  }

  livemon::ui::IngestWorker& ingest_;
  livemon::ui::EventLogModel log_;
  livemon::ui::EventLogView* logView_ = nullptr;
  QWidget* content_ = nullptr;
  QVBoxLayout* layout_ = nullptr;
  std::map<std::string, Chart*> charts_;
  std::vector<std::unique_ptr<Chart>> owned_;
  std::vector<std::pair<Chart*, QLineSeries*>> lines_;
  double newest_ = 0.0;
};
