#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include <QScrollArea>
#include <QString>
#include <QStringList>

#include <livemon/clock.h>
#include <livemon/ui/data/ingest_batch.h>
#include <livemon/ui/data/ingest_limits.h>
#include <livemon/ui/model/chart_sections.h>
#include <livemon/ui/model/chart_view_options.h>
#include <livemon/ui/model/time_view.h>
#include <livemon/ui/widgets/stat_chart_view.h>

class QKeyEvent;
class QLabel;
class QPushButton;
class QResizeEvent;
class QToolButton;

namespace livemon::ui {

class RunDisplay;
class StatRegistry;

// GUI thread only.
// The scrollable grid of charts, in collapsible sections by name prefix (see arrangeCharts: the
// user's sections first, livemon's own diagnostics last, loss first within a section), in as many
// columns as fit, the cards growing with the window. A chart can be pinned (a section of its own,
// first) and enlarged to fill the area (Escape or its button returns); a filter that lets one
// chart through gives it the area too, and one that lets none through says so.
//
// A chart is made when its first series arrives; making one costs about a millisecond, so a burst
// of new charts is spread over several refreshes (a time budget per refresh) to keep the GUI
// responsive. Charts are placed by hand rather than by a QGridLayout, whose cost grows with every
// widget re-added when a chart is inserted in order.
//
// It owns the x range all charts share (TimeView): zooming or panning any chart moves them all;
// a double click, a new time range or a new x-axis mode returns them to following live data.
class ChartGrid : public QScrollArea {
  Q_OBJECT

 public:
  explicit ChartGrid(const StatRegistry& registry, QWidget* parent = nullptr);

  // New series from the registry: their charts are made (or extended) over the next refreshes.
  // A chart draws at most maxLinesPerChart() lines; the series beyond are left off it.
  void addSeries(const std::vector<SeriesId>& ids);
  // Series whose source was removed (StatRegistry::removeSources): their lines leave the charts,
  // and a chart (or a chart still to be made) left with no series leaves the grid.
  void removeSeries(const std::vector<SeriesId>& ids);
  // Source labels changed: renames legend entries.
  void refreshSeriesNames();

  // Thread-safety: a plain value type.
  struct RefreshStats {
    int created = 0;   // charts made
    int rendered = 0;  // charts redrawn
    int deferred = 0;  // charts due but over the budget, drawn next time
  };
  // One GUI tick: makes pending charts (within a time budget) and redraws what is on screen and
  // changed. Redrawing has a time budget too: charts are drawn here and painted right after, and
  // a Stat window that lands on every chart at once would otherwise make one long stall. Due
  // charts are drawn longest undrawn first, so those over the budget come first next time, and
  // while every chart has new data at every refresh each is still drawn in its turn. A chart is
  // not started when what it took last time would overrun the budget (unless it is the first of
  // the refresh): a chart of several bands takes a few milliseconds, and starting it just before
  // the budget ran out made refreshes of twice the budget.
  RefreshStats refresh();

  // Shows only charts whose name contains `filter` (ignoring case); '*' and '?' are wildcards and
  // '|' separates alternatives ("loss|acc").
  void setNameFilter(const QString& filter);
  const QString& nameFilter() const noexcept { return choices_.filter.text(); }

  // A pinned chart is shown first, in the "pinned" section, whatever its name.
  void setPinned(const QString& chart, bool pinned);
  bool isPinned(const QString& chart) const { return choices_.pinned.contains(chart); }
  // The chart that fills the chart area; std::nullopt returns to the grid.
  void setEnlarged(const std::optional<QString>& chart);
  const std::optional<QString>& enlarged() const noexcept { return choices_.enlarged; }
  // Sections by name (chartSection(), kPinnedSection): a collapsed one shows its header only.
  void setSectionCollapsed(const QString& section, bool collapsed);
  bool isSectionCollapsed(const QString& section) const { return choices_.collapsed.contains(section); }
  // The choices as they are now: the filter, the pinned charts, the collapsed sections, the
  // enlarged chart.
  const ChartChoices& choices() const noexcept { return choices_; }
  // What a session kept (DashboardSettings): the pinned charts and collapsed sections of
  // `saved` (its filter and enlarged chart are left as they are), and the smoothing and log scales.
  void restoreChoices(const ChartChoices& saved, const ChartViewState& view);
  // What is shown, as of the last layout.
  const ChartArrangement& arrangement() const noexcept { return arrangement_; }
  // The text shown instead of charts ("No chart matches …"); empty while charts are shown.
  QString placeholderText() const;
  // Said under "Waiting for charts…" while there are none: why nothing arrives (refusedNote).
  void setWaitingNote(const QString& note);
  // The endpoints the dashboard connects to, named by the empty chart area (with what to start
  // there, and a Connect… button: connectRequested).
  void setEndpoints(const QStringList& endpoints);
  void setTimeAxisMode(TimeAxisMode mode);
  void setTimeRange(TimeRange range);
  void setPaused(bool paused);
  void showRange(XRange range);
  void followLive();
  // Replaying a recording: the live edge is the playhead, not the newest sample or the clock: with
  // the wall-clock (or Step) axis `wallMs` (ms since the Unix epoch), with "Since run start"
  // `sinceRunStart` (seconds; std::nullopt: the newest sample). std::nullopt returns to live data.
  void setPlayhead(std::optional<double> wallMs, std::optional<double> sinceRunStart = std::nullopt) {
    playheadMs_ = wallMs;
    playheadRunS_ = wallMs ? sinceRunStart : std::nullopt;
  }
  std::optional<double> playhead() const noexcept { return playheadMs_; }
  const TimeView& timeView() const noexcept { return view_; }
  ChartRenderContext renderContext() const;

  // Every chart's smoothing and log scale.
  ChartViewOptions& viewOptions() noexcept { return *viewOptions_; }
  // The runs' colours and which are shown, for every chart (StatChartView::setRunDisplay); it
  // must outlive the grid.
  void setRunDisplay(const RunDisplay* runs);

  StatChartView* chart(const QString& statName) const;
  // Scrolls the grid until `statName`'s chart is in view, opening its section and leaving another
  // chart's enlargement when needed. Returns false when there is no such chart, or the filter
  // hides it.
  bool revealChart(const QString& statName);
  // In display order, including those the filter hides.
  std::vector<StatChartView*> charts() const;
  int pendingChartCount() const noexcept { return static_cast<int>(pendingStats_.size()); }

  // Lines one chart draws at most (StatChartView::setMaxLines), for the charts made from now on.
  void setMaxLinesPerChart(std::size_t lines) noexcept { maxLinesPerChart_ = lines; }
  std::size_t maxLinesPerChart() const noexcept { return maxLinesPerChart_; }
  // Series handed to addSeries that are on no chart (drawn or to be drawn), their chart being
  // full. (A rank's own series are not handed over while its rank group stands for it.)
  std::size_t undrawnLineCount() const;

  // Time allowed per refresh for making charts (at least one is made per refresh).
  void setCreationBudget(std::chrono::milliseconds budget) { budgets_.creation = budget; }
  // Time allowed per refresh for redrawing charts (at least one is redrawn per refresh).
  void setRenderBudget(std::chrono::milliseconds budget) { budgets_.render = budget; }
  // What times both budgets and each chart's redraw (its monotonic time); the system clock until
  // set. It must outlive the grid.
  void setClock(const Clock& clock) { budgets_.clock = &clock; }

 signals:
  void chartCountChanged(int count);
  // A chart was made (its series follow); views that decorate charts attach here.
  void chartCreated(StatChartView* chart);
  // The empty chart area's Connect… button was clicked.
  void connectRequested();
  // A chart was enlarged (true) or the grid came back (false): the window gives it the log's room.
  void enlargedChanged(bool enlarged);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  int columnCount() const;
  void relayout();
  void showPlaceholder(const QString& text, bool offerConnect = false);
  QString waitingText() const;
  void placeChart(StatChartView* chart, const QRect& geometry);
  QToolButton* sectionHeader(const ChartSection& section);
  StatChartView* createChart(const QString& statName);

  const StatRegistry& registry_;
  TimeView view_;
  QWidget* content_ = nullptr;
  QLabel* placeholder_ = nullptr;
  QPushButton* connectButton_ = nullptr;  // under the placeholder while there is no chart
  QString waitingNote_;  // setWaitingNote
  QStringList endpoints_;  // setEndpoints
  // Display order: chartLess (sections, then what a user looks at first).
  struct DisplayOrder {
    bool operator()(const QString& a, const QString& b) const;
  };
  std::map<QString, StatChartView*, DisplayOrder> charts_;
  std::map<QString, std::vector<SeriesId>, DisplayOrder> pendingStats_;  // series waiting for their chart
  ChartChoices choices_;
  ChartArrangement arrangement_;
  std::map<QString, QToolButton*> headers_;  // by section name
  struct Budgets {
    std::chrono::milliseconds creation{6};
    std::chrono::milliseconds render{5};
    const Clock* clock = &systemClock();
  };
  Budgets budgets_;
  std::size_t maxLinesPerChart_ = kDefaultMaxLinesPerChart;
  std::set<const StatChartView*> deferred_;  // over the last refresh's budget
  std::map<const StatChartView*, std::chrono::nanoseconds> renderCost_;  // each chart's last redraw
  std::map<const StatChartView*, uint64_t> lastRendered_;  // the refresh that last redrew each chart
  uint64_t refreshes_ = 0;
  std::set<SeriesId> undrawn_;  // refused by a full chart
  std::optional<double> playheadMs_;
  std::optional<double> playheadRunS_;
  ChartViewOptions* viewOptions_ = nullptr;  // a child
  const RunDisplay* runs_ = nullptr;
};

}  // namespace livemon::ui
