#pragma once

#include <optional>
#include <set>
#include <vector>

#include <QRegularExpression>
#include <QString>
#include <QStringList>

namespace livemon::ui {

// Where a chart goes on the grid, decided by its name alone.
//
// Section: the name's prefix up to its first '.' ("train.loss" → "train", "system.memory_gb" →
// "system"), or "range/" for profiler ranges ("range/forward"); a name without a prefix is in
// section "" (shown as "other"). Sections come in this order: "train", then the evaluation ones
// ("eval", "val", "validation", "test"), then the user's other sections by name, then "" , then
// "range/", then "system", and livemon's own diagnostics ("livemon") last.
//
// Within a section the charts a user looks at first lead: loss, then accuracy, then step time,
// then throughput, then the learning rate, then the rest; ties by name.
QString chartSection(const QString& chart);
// The section's title on the grid: its name, "other" for "".
QString sectionTitle(const QString& section);
// Strict weak orders (total: the last tie-break is the name).
bool sectionLess(const QString& a, const QString& b);
bool chartLess(const QString& a, const QString& b);

// Immutable after construction: any thread.
// The chart filter a user types: alternatives separated by '|' ("loss|acc"), each matching
// anywhere in a chart's name, ignoring case; '*' and '?' are wildcards. Blank alternatives are
// ignored; an empty filter matches everything.
class ChartFilter {
 public:
  ChartFilter() = default;
  explicit ChartFilter(const QString& text);

  bool matches(const QString& chart) const;
  bool empty() const noexcept { return substrings_.isEmpty() && patterns_.empty(); }
  const QString& text() const noexcept { return text_; }

 private:
  QString text_;
  QStringList substrings_;
  std::vector<QRegularExpression> patterns_;  // compiled once, not per chart
};

// Thread-safety: a plain value type.
// One section as the grid shows it.
struct ChartSection {
  QString name;   // chartSection(); "pinned" sections have name kPinnedSection
  QString title;  // as shown
  int charts = 0;  // charts in it that the filter lets through (collapsed or not)
  bool collapsed = false;
  std::vector<QString> shown;  // in display order; empty when collapsed
};

// The section pinned charts are gathered in, first.
inline const QString kPinnedSection = QStringLiteral("\x01pinned");

// Thread-safety: a plain value type.
// What the grid shows, computed from the charts' names and the user's choices, without widgets.
struct ChartArrangement {
  enum class Mode {
    Empty,    // no chart yet
    NoMatch,  // charts exist, the filter lets none through
    Single,   // one chart fills the area: enlarged, or the only one the filter lets through
    Grid,     // sections of charts
  };
  Mode mode = Mode::Empty;
  QString single;                      // Mode::Single: the chart
  std::vector<ChartSection> sections;  // Mode::Grid: in order, only those with charts through the filter
};

// Thread-safety: a plain value type.
// The user's choices that arrange() follows. The pinned charts and collapsed sections are kept between sessions (DashboardSettings); the
// filter and the enlarged chart are for the moment.
struct ChartChoices {
  ChartFilter filter;
  std::set<QString> pinned;     // shown in the pinned section, not in their own
  std::set<QString> collapsed;  // section names whose charts are hidden
  std::optional<QString> enlarged;  // fills the area while it exists and passes the filter
};

// Arranges `charts` (any order) as the grid shows them.
ChartArrangement arrangeCharts(const std::vector<QString>& charts, const ChartChoices& choices);

}  // namespace livemon::ui
