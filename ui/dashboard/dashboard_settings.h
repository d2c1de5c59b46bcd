#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <livemon/transport/curve.h>
#include <livemon/ui/model/chart_sections.h>
#include <livemon/ui/model/chart_view_options.h>
#include <livemon/ui/model/time_view.h>

class QSettings;

namespace livemon::ui {

// The views beside the event log, on tabs.
enum class DashboardView { Charts, Ranges, Ranks };
// "charts" "ranges" "ranks", as the settings keep the view; an unknown key reads as Charts.
QString dashboardViewKey(DashboardView view);
DashboardView dashboardViewFromKey(const QString& key);

// A settings file is edited by hand too: what is read of it stays within these.
inline constexpr qsizetype kMaxSavedChartChoices = 4096;      // pinned charts, and collapsed sections
inline constexpr qsizetype kMaxSavedChartNameLength = 1024;   // longer names are left out
inline constexpr std::size_t kMaxSavedLogScaleCharts = 10'000;
inline constexpr int kMaxSavedEndpointCurves = 256;
inline constexpr std::size_t kMaxSavedRunColours = 1024;
inline constexpr qsizetype kMaxSavedRunNameLength = 1024;

// Not thread-safe: one owner at a time.
// Everything the dashboard and its window keep from one session to the next, typed: the only
// place that knows the keys, so a settings file written by an earlier livemon reads the same.
// Getters give the default when a key is unset or does not read as its type; setters write at
// once (QSettings writes the file from time to time and on destruction; sync() forces it).
//
//   endpoints              the endpoints of the last session
//   endpointCurve          per endpoint, the paths of the CURVE certificates the Connect dialog gave it
//   ingest/history         whether each endpoint's history is fetched
//   alerts/rules           the user's alert rules
//   baseline/followLive    whether baselines follow the live run's elapsed time
//   window/geometry, window/state, window/splitter    the main window's layout
//   view/timeRange, view/xAxis, view/tab               the toolbar's choices and the tab shown
//   log/autoScroll         whether the event log follows new rows
//   log/statWindows        whether the event log lists Stat windows
//   recordings/folder      where the last recording was opened from
//   charts/pinned, charts/collapsed                    the grid's pinned charts and collapsed sections
//   charts/smoothing, charts/logScaleAll, charts/logScale   how the charts draw
//   runs/colours           each run's colour: run name → index into the run palette
//   runs/summaryKeys, runs/bestIsMax                   the Runs panel's summary columns
class DashboardSettings {
 public:
  // `file` empty: the user's livemon settings; otherwise that INI file.
  explicit DashboardSettings(const QString& file = {});
  ~DashboardSettings();
  DashboardSettings(const DashboardSettings&) = delete;
  DashboardSettings& operator=(const DashboardSettings&) = delete;

  // The endpoints, trimmed, blank ones left out.
  std::vector<std::string> endpoints() const;
  void setEndpoints(const QStringList& endpoints);
  // Paths only, never a key's contents; an entry missing a part is left out.
  std::map<std::string, transport::CurveOptions> endpointCurves() const;
  void setEndpointCurves(const std::map<std::string, transport::CurveOptions>& curves);
  // True unless set false.
  bool fetchHistory() const;
  void setFetchHistory(bool fetch);

  // As written: AlertCentre keeps those that parse.
  QStringList alertRules() const;
  void setAlertRules(const QStringList& rules);
  // False unless set true.
  bool baselinesFollowLive() const;
  void setBaselinesFollowLive(bool follow);

  // Thread-safety: a plain value type.
  // The main window's layout, as QMainWindow and QSplitter save it (empty: none).
  struct WindowLayout {
    QByteArray geometry;
    QByteArray state;
    QByteArray splitter;
  };
  WindowLayout windowLayout() const;
  void setWindowLayout(const WindowLayout& layout);
  // std::nullopt when unset or not a key livemon writes.
  std::optional<TimeRange> timeRange() const;
  void setTimeRange(TimeRange range);
  std::optional<TimeAxisMode> timeAxisMode() const;
  void setTimeAxisMode(TimeAxisMode mode);
  DashboardView view() const;
  void setView(DashboardView view);
  // True unless set false.
  bool logAutoScroll() const;
  void setLogAutoScroll(bool on);
  // False unless set true: the log lists the events other than Stat windows.
  bool logShowsStatWindows() const;
  void setLogShowsStatWindows(bool show);
  // The theme's name ("dark", "light"; themeNamed() reads it); empty when unset.
  QString theme() const;
  void setTheme(const QString& theme);
  // The folder the last recording was opened from; empty when unset.
  QString recordingFolder() const;
  void setRecordingFolder(const QString& folder);

  // The pinned charts and collapsed sections; the filter and the enlarged chart are not kept.
  ChartChoices chartChoices() const;
  void setChartChoices(const ChartChoices& choices);
  // A smoothing that does not read as a number is the default (ChartViewOptions clamps others).
  ChartViewState chartView() const;
  void setChartView(const ChartViewState& state);

  // At most kMaxSavedRunColours (names over kMaxSavedRunNameLength, and indices that do not read
  // as a number, left out).
  std::map<QString, unsigned> runColours() const;
  void setRunColours(const std::map<QString, unsigned>& colours);
  QStringList runSummaryKeys() const;
  void setRunSummaryKeys(const QStringList& keys);
  // False unless set true: the best value of a summary key is its lowest.
  bool runBestIsMax() const;
  void setRunBestIsMax(bool max);

  void sync();

 private:
  std::unique_ptr<QSettings> store_;
};

}  // namespace livemon::ui
