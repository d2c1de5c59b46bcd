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
// then throughput, then the learning rate, then the rest; ties by name. Ranges (range/) go by name
// alone: "range/aten::cross_entropy_loss" is code that was timed, not the run's loss.
QString chartSection(const QString& chart);
// Whether a chart starts with a line hidden (its legend entry dimmed, a click shows it): a range's
// count, p99 and max, so that its mean and p50 are what the axis fits, not a count of calls on
// its own axis or the spikes of a rare slow call.
bool lineHiddenAtFirst(const QString& chart, const QString& aggregation);
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

// Thread-safety: a plain value type.
// A cell of the grid: its row and column.
struct FlowCell {
  int row = 0;
  int column = 0;
  friend bool operator==(const FlowCell&, const FlowCell&) = default;
};

// Thread-safety: a plain value type.
// Where a section of ChartArrangement::sections goes on a grid of `columns` columns.
struct SectionFlow {
  FlowCell header;  // its label, above its first chart
  int headerSpan = 1;  // columns the label spans: its charts in the label's row
  bool headerRow = false;  // collapsed: the label has a row of its own, across the grid
  std::vector<FlowCell> charts;
};

// Thread-safety: a plain value type.
// The grid's cells, sections flowing on from one to the next: a section starts in the row and
// column after the previous one's last chart, so a section of one chart leaves no half row empty;
// its label stands above its first chart, over the columns its charts take in that row. A
// collapsed section's label takes a row of its own.
struct ChartFlow {
  std::vector<SectionFlow> sections;  // as arrangement.sections
  int rows = 0;
  std::vector<bool> labelled;  // per row: a section label starts there (above its charts)
  std::vector<bool> labelOnly;  // per row: a collapsed section's label, no chart
};
ChartFlow flowCharts(const ChartArrangement& arrangement, int columns);

}  // namespace livemon::ui
