#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include <QList>
#include <QPointF>
#include <QString>
#include <QtCharts/QChartView>

#include <livemon/ui/data/ingest_batch.h>
#include <livemon/ui/data/ingest_limits.h>
#include <livemon/ui/model/chart_csv.h>
#include <livemon/ui/model/line_trace.h>
#include <livemon/ui/model/step_points.h>
#include <livemon/ui/model/time_view.h>
#include <livemon/ui/widgets/chart_trace.h>
#include <livemon/ui/widgets/chart_y_axes.h>

class QAbstractButton;
QT_BEGIN_NAMESPACE
class QAbstractAxis;
class QAreaSeries;
class QLineSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace livemon::ui {

class ChartBand;
class ChartGestures;
class ChartNanRegions;
class ChartLegend;
class ChartStepNote;
class ChartHover;
class ChartViewOptions;
class RunDisplay;
class StatRegistry;
struct SeriesEntry;

// Thread-safety: a plain value type.
// What every chart is asked to show on a refresh.
struct ChartRenderContext {
  TimeAxisMode mode = TimeAxisMode::WallClock;
  XRange x;
  bool frozen = false;  // paused: new samples alone do not redraw
  bool following = true;  // false: zoomed or panned, the charts no longer follow live data
  // Paused: samples after this x (the newest when pausing) are not drawn. A time in ms for Step.
  std::optional<double> cutoff;
  // Step: the points drawn, by their time (ms since the Unix epoch; TimeView::window()).
  XRange window{-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
};

// GUI thread only.
// One Stat's chart: a line per (source, aggregation), a shaded min–max band per source that has
// both, a legend below the plot whose entries toggle their lines (ChartLegend), a hover tooltip
// with the time and the values under the cursor, rubber-band zoom (left drag), Ctrl+wheel zoom (the plain wheel scrolls the
// page), pan (right or middle drag) and a double click that returns to following live data. The
// y axis fits what is visible unless a rubber band set it.
//
// How values are drawn follows ChartViewOptions: every line smoothed (the raw line kept faint
// behind it) and a linear or log y axis (values a log axis cannot show are left out, and a note
// on the plot counts them). `count` beside other aggregations has an axis of its own on the
// right; durations say "ms" on theirs (ChartYAxes). A line breaks where its series stalled for
// more than twice its usual interval (traceSeries), and so does its min–max band (ChartBand).
//
// With the Step axis each line is drawn from its points in the time range placed at their steps
// (StepPoints); a chart whose shown lines carry no step says so on the plot rather than stay blank
// (ChartStepNote).
//
// Drawing is pull-based: render() reads the series stores, decimates the visible range to the
// plot's pixel columns (SeriesStore::decimate) and hands each line its points with one
// QXYSeries::replace. It does nothing when the chart is off screen or nothing it shows changed,
// so a grid of hundreds of charts costs only what is on screen. (QXYSeries::append recomputes the
// series geometry on every call and OpenGL acceleration does not apply to area series, so neither
// is used.)
class StatChartView : public QChartView {
  Q_OBJECT

 public:
  StatChartView(const QString& statName, const StatRegistry& registry, TimeAxisMode mode, QWidget* parent = nullptr);
  ~StatChartView() override;

  const QString& statName() const noexcept { return statName_; }
  // Titles the chart with its name in at most `width` pixels (the title is centred: the room
  // either side of the centre, say left of buttons over the chart's top right): a longer name is
  // elided in the middle and shown whole in the chart's tooltip.
  void fitTitle(int width);

  // Adds a series of this Stat; it is drawn from the next render(). Returns whether the chart
  // draws it: false when it already has maxLines() lines (the series is left out, for good).
  bool addSeries(SeriesId id);
  // Lines drawn at most. Lowering it does not take lines off.
  void setMaxLines(std::size_t lines) noexcept { maxLines_ = lines; }
  std::size_t maxLines() const noexcept { return maxLines_; }
  // Lines drawn and to be drawn from the next render().
  std::size_t lineCount() const noexcept { return lines_.size() + pendingSeries_.size(); }
  // Takes series off the chart, with any band they edge (their source's data is gone: see
  // StatRegistry::removeSources). Ids it does not show are ignored. Their registry entries may
  // already be freed: only the ids are used.
  void removeSeries(const std::vector<SeriesId>& ids);
  void setTimeAxisMode(TimeAxisMode mode);
  // Source labels changed: renames the legend entries.
  void refreshSeriesNames();
  // The ranks the scorer flags (their sources): their lines, drawn over their group's band, are
  // named "rank 7 (flagged)".
  void setFlaggedSources(std::set<SourceId> sources);
  // The legend below the plot (ChartLegend): an entry per line drawn or hidden by the user, and
  // one per rank group's bands ("min–max over 64 ranks").
  const ChartLegend& legend() const noexcept { return *legend_; }
  // Smoothing and log scale come from `options` (nullptr: raw lines on a linear axis); it must
  // outlive the chart or be unset first.
  void setViewOptions(ChartViewOptions* options);
  ChartViewOptions* viewOptions() const noexcept { return options_; }
  // The runs' colours and which are shown (nullptr: every run shown, sources coloured apart); it
  // must outlive the chart or be unset first. A hidden run's lines leave the chart; with several
  // runs shown the chart draws each run's main aggregation (mainAggregationRank), its rank band
  // around it, in the run's colour.
  void setRunDisplay(const RunDisplay* runs);
  // Whether the lines of several runs are shown, as last styled.
  bool showsSeveralRuns() const noexcept { return runs_.several; }
  TimeAxisMode timeAxisMode() const noexcept { return mode_; }
  // The lines shown (not hidden), named as in the legend, for a CSV export of the visible range.
  std::vector<CsvColumn> csvColumns() const;

  // Redraws from the stores when on screen and anything shown changed; `force` redraws anyway.
  // Returns whether it redrew.
  bool render(const ChartRenderContext& context, bool force = false);
  // Whether render(context) would redraw: on screen, with something new to show.
  bool needsRender(const ChartRenderContext& context) const;
  bool isOnScreen() const;

  // What the chart shows, for tooltips and tests.
  std::vector<SeriesId> seriesIds() const;
  QLineSeries* line(SeriesId id) const;
  QLineSeries* line(const QString& aggregation, SourceId source) const;
  // The band's first stretch (its area), and all of them.
  QAreaSeries* band(SourceId source) const;
  const ChartBand* bandStretches(SourceId source) const;
  // A rank group's band around its median line (RankGroups): its first stretch, and all of them.
  QAreaSeries* rankBand(SeriesId median) const;
  const ChartBand* rankBandStretches(SeriesId median) const;
  // Step axis: the note on the plot about lines without steps; empty when there is none.
  QString stepNote() const;
  // line() holds the values as they came (faint behind a smoothed line); smoothedLine() their
  // moving average, empty without smoothing. The traces hold each line's pieces.
  QLineSeries* smoothedLine(SeriesId id) const;
  const ChartTrace* trace(SeriesId id) const;
  const ChartTrace* smoothedTrace(SeriesId id) const;
  const ChartYAxes& yAxes() const noexcept { return yAxes_; }
  bool isLogScale() const noexcept { return yAxes_.isLog(); }
  // The shaded "NaN" bands where shown lines are not numbers.
  const ChartNanRegions& nanRegions() const noexcept { return *nanRegions_; }
  // The note on the plot about values a log axis leaves out; empty when there is none.
  QString scaleNote() const { return yAxes_.note(); }
  XRange xRange() const;
  XRange yRange() const;
  bool hasManualYRange() const noexcept { return manualY_.has_value(); }
  bool isSeriesVisible(SeriesId id) const;
  // Whether every line is an event's field (one point per eval event, say): such a chart is
  // drawn with a marker at every point and never smoothed, as a dozen points smoothed would
  // draw a curve nobody measured.
  bool isEventChart() const;
  // What a click on the series' legend entry does.
  void setSeriesVisible(SeriesId id, bool visible);
  // The hover text at a viewport position: the tooltips of the marks under it (alerts, NaN
  // regions), then each line's value, a source's all from the window nearest the cursor (NaN
  // where it was NaN there); empty outside the plot area or with nothing to say.
  QString tooltipAt(QPoint viewportPos) const;
  // The plot area in viewport coordinates.
  QRect plotRect() const;
  // The values (x in the mode's units, y on the left axis) at a viewport position in the plot.
  std::optional<QPointF> valueAt(QPoint viewportPos) const;
  // Zoomed y (a rubber band): the left axis shows `y` until resetView().
  void setManualYRange(XRange y);
  // Back to following live data with y fitted to it: what a double click does.
  void resetView();
  // Shown while the chart is zoomed (x not following live data, or y fixed by a rubber band): a
  // click returns to following, like a double click.
  QAbstractButton* followLiveButton() const;
  // The chart's menu (log scale, reset, export) at a viewport position.
  void showContextMenu(QPoint viewportPos);

 signals:
  // The user zoomed or panned to [min, max] (in the current mode's x units).
  void rangeRequested(double min, double max);
  // The user asked to follow live data again (double click).
  void resetRequested();
  // render() redrew: decorations placed by position (alert markers) follow the axes now.
  void rendered();

 protected:
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void leaveEvent(QEvent* event) override;
  // A theme switch (applyTheme) changes the application's palette: the chart takes the new
  // theme's colours, its lines and legend included.
  void changeEvent(QEvent* event) override;

 private:
  struct Line {
    SeriesId id = 0;
    const SeriesEntry* entry = nullptr;
    std::unique_ptr<ChartTrace> raw;     // the values; has the legend entry; faint when smoothed
    std::unique_ptr<ChartTrace> smooth;  // their moving average, empty without smoothing
    QPen pen;                            // the line's own (the smoothed line's, when smoothed)
    bool hidden = false;  // by the user, from the legend
    bool offRun = false;  // left out for the runs: its run hidden, or not the main aggregation of several runs
    bool count = false;  // on the count axis
    bool onP99 = false;  // a max left out where it equals its p99 (p99Under), as last drawn
    TraceResult trace;   // as last handed to the series
    StepPoints steps;    // Step axis: the points last drawn
    QLineSeries* series() const { return raw->head(); }
  };
  struct Band {
    SourceId source = 0;
    const Line* median = nullptr;  // a rank group's band: around this line, between its edges
    std::unique_ptr<ChartBand> area;  // its areas owned by the chart; none without both edges
    Line* min = nullptr;
    Line* max = nullptr;
    bool shaded = true;  // a rank group's bands are hidden together from their legend entry
  };
  struct RenderKey {
    TimeAxisMode mode = TimeAxisMode::WallClock;
    XRange x;
    XRange window;
    int columns = 0;
    int rows = 0;
    uint64_t data = 0;
    uint64_t layout = 0;
    std::optional<XRange> manualY;
    unsigned options = 0;
    unsigned runs = 0;
    bool following = true;
    friend bool operator==(const RenderKey&, const RenderKey&) = default;
  };

  RenderKey keyFor(const ChartRenderContext& context) const;
  // Traces the lines for `key` and sets the axes. With `settle`, it stops before handing the points
  // to the series when the axes' new labels changed the plot's size (another key): the caller
  // draws again for the new size, and Qt has not worked out the shapes of points never shown.
  // Returns whether the lines have their points.
  bool draw(const ChartRenderContext& context, const RenderKey& key, bool settle);
  void rebuildSeries();
  // Pairs the lines into bands: a source's min and max lines, a rank group's edges.
  void pairBands();
  static bool isRankEdge(const Line& line);
  // The p99 line a max line is drawn over (same source and role), when it is shown and the max is
  // no band's edge; nullptr otherwise. Where they are equal the max is left out (hideWhereEqual).
  const Line* p99Under(const Line& max) const;
  void installXAxis(TimeAxisMode mode);
  void styleLines();
  // Sets each line's offRun from the RunDisplay, and runs_.several.
  void applyRuns();
  // Drawn: neither hidden by the user nor left out for the runs.
  static bool isShown(const Line& line) { return !line.hidden && !line.offRun; }
  // The legend's entries from the lines as last drawn; a click on one toggles its line or bands.
  void updateLegend();
  void legendClicked(int64_t key);
  const Line* findLine(SeriesId id) const;
  bool multiSource() const;
  // The rank group shown when the chart shows one and otherwise only ranks drawn over its band.
  std::optional<SourceId> soleRankGroup() const;
  // Sources that are ranks drawn over a group's band, flagged ones first.
  std::vector<SourceId> ranksOverBands() const;
  QString lineName(const Line& line) const;
  // The same with multiSource() and whether soleRankGroup() has one, worked out once per pass.
  QString lineName(const Line& line, bool several, bool oneGroup) const;
  uint64_t dataVersion() const;
  // Appends the y of `trace`'s points inside the request's x range.
  static void pointsInView(const TraceResult& trace, const TraceRequest& request, std::vector<double>& values);
  // Antialiases the chart unless its shown lines, as traced for axes spanning `y` and `counts`,
  // are dense (drawsDense): then they fill their columns, and antialiasing them is most of what
  // painting the chart costs, for edges nobody could see.
  void antialias(XRange y, std::optional<XRange> counts, const RenderKey& key);
  // Returns whether the y labels changed.
  bool updateAxes(const ChartRenderContext& context, XRange y, std::optional<XRange> counts);
  void configureYAxes();
  void attachAll();
  const QList<QPointF>& shownPoints(const Line& line) const;
  // The smoothing the lines are drawn with: the options', none for an event chart.
  double effectiveSmoothing() const;

  QString statName_;
  const StatRegistry& registry_;
  TimeAxisMode mode_;
  std::vector<std::unique_ptr<Line>> lines_;
  std::vector<Band> bands_;
  std::vector<SeriesId> pendingSeries_;
  std::size_t maxLines_ = kDefaultMaxLinesPerChart;
  QAbstractAxis* xAxis_ = nullptr;
  ChartYAxes yAxes_;
  ChartViewOptions* options_ = nullptr;
  // setRunDisplay's, its version as last styled, and whether several runs were shown then.
  struct Runs {
    const RunDisplay* display = nullptr;
    unsigned version = 0;
    bool several = false;
  } runs_;
  double smoothing_ = 0.0;  // as last drawn

  uint64_t layoutVersion_ = 0;  // series added, hidden, shown, renamed, axis swapped
  std::optional<RenderKey> lastKey_;
  uint64_t frozenData_ = 0;
  XRange shownX_;
  XRange shownWindow_;
  XRange shownY_{0.0, 1.0};
  std::optional<XRange> manualY_;

  std::set<SourceId> flagged_;  // setFlaggedSources
  std::unique_ptr<ChartLegend> legend_;
  std::unique_ptr<ChartHover> hover_;
  std::unique_ptr<ChartGestures> gestures_;
  std::unique_ptr<ChartStepNote> stepNote_;
  std::unique_ptr<ChartNanRegions> nanRegions_;
};

}  // namespace livemon::ui
