#include <livemon/ui/model/chart_sections.h>

#include <algorithm>
#include <map>


namespace livemon::ui {

namespace {

const QString kRangeSection = QStringLiteral("range/");

int sectionRank(const QString& section) {
  if (section == QLatin1String("train")) return 0;
  if (section == QLatin1String("eval") || section == QLatin1String("val") || section == QLatin1String("validation")) {
    return 1;
  }
  if (section == QLatin1String("test")) return 2;
  if (section == QLatin1String("livemon")) return 7;
  if (section == QLatin1String("system")) return 6;
  if (section == kRangeSection) return 5;
  if (section.isEmpty()) return 4;
  return 3;
}

// What a user looks at first within a section, by the name after the section's prefix.
int chartRank(const QString& chart) {
  const QString section = chartSection(chart);
  // A range is named after code ("aten::cross_entropy_loss"), not after what a run measures:
  // ranges go by name alone.
  if (section == kRangeSection) return 0;
  const QString leaf = (section.isEmpty() ? chart : chart.mid(section.endsWith(QLatin1Char('/')) ? section.size() : section.size() + 1))
                           .toLower();
  if (leaf.contains(QLatin1String("loss"))) return 0;
  if (leaf.startsWith(QLatin1String("acc")) || leaf.contains(QLatin1String("accuracy"))) return 1;
  if ((leaf.contains(QLatin1String("step")) || leaf.contains(QLatin1String("iter"))) &&
      (leaf.contains(QLatin1String("time")) || leaf.contains(QLatin1String("_ms")))) {
    return 2;
  }
  if (leaf.contains(QLatin1String("per_s")) || leaf.contains(QLatin1String("throughput")) ||
      leaf.contains(QLatin1String("/s"))) {
    return 3;
  }
  if (leaf == QLatin1String("lr") || leaf.contains(QLatin1String("learning_rate"))) return 4;
  return 5;
}

}  // namespace

QString chartSection(const QString& chart) {
  if (chart.startsWith(kRangeSection)) return kRangeSection;
  const qsizetype dot = chart.indexOf(QLatin1Char('.'));
  return dot > 0 ? chart.left(dot) : QString();
}

bool lineHiddenAtFirst(const QString& chart, const QString& aggregation) {
  return chart.startsWith(kRangeSection) &&
         (aggregation == QLatin1String("count") || aggregation == QLatin1String("p99") || aggregation == QLatin1String("max"));
}

QString sectionTitle(const QString& section) {
  if (section == kPinnedSection) return QStringLiteral("pinned");
  return section.isEmpty() ? QStringLiteral("other") : section;
}

bool sectionLess(const QString& a, const QString& b) {
  const int rankA = sectionRank(a);
  const int rankB = sectionRank(b);
  if (rankA != rankB) return rankA < rankB;
  return a < b;
}

bool chartLess(const QString& a, const QString& b) {
  const QString sectionA = chartSection(a);
  const QString sectionB = chartSection(b);
  if (sectionA != sectionB) return sectionLess(sectionA, sectionB);
  const int rankA = chartRank(a);
  const int rankB = chartRank(b);
  if (rankA != rankB) return rankA < rankB;
  return a < b;
}

ChartFilter::ChartFilter(const QString& text) : text_(text.trimmed()) {
  for (const QString& part : text_.split(QLatin1Char('|'))) {
    const QString alternative = part.trimmed();
    if (alternative.isEmpty()) continue;
    if (alternative.contains(QLatin1Char('*')) || alternative.contains(QLatin1Char('?'))) {
      patterns_.emplace_back(
          QRegularExpression::wildcardToRegularExpression(alternative, QRegularExpression::UnanchoredWildcardConversion),
          QRegularExpression::CaseInsensitiveOption);
    } else {
      substrings_ << alternative;
    }
  }
}

bool ChartFilter::matches(const QString& chart) const {
  if (empty()) return true;
  for (const QString& substring : substrings_) {
    if (chart.contains(substring, Qt::CaseInsensitive)) return true;
  }
  return std::any_of(patterns_.begin(), patterns_.end(),
                     [&chart](const QRegularExpression& pattern) { return pattern.match(chart).hasMatch(); });
}

ChartArrangement arrangeCharts(const std::vector<QString>& charts, const ChartChoices& choices) {
  ChartArrangement result;
  if (charts.empty()) return result;
  std::vector<QString> passing;
  for (const QString& chart : charts) {
    if (choices.filter.matches(chart)) passing.push_back(chart);
  }
  if (passing.empty()) {
    result.mode = ChartArrangement::Mode::NoMatch;
    return result;
  }
  std::sort(passing.begin(), passing.end(), chartLess);
  if (choices.enlarged && std::find(passing.begin(), passing.end(), *choices.enlarged) != passing.end()) {
    result.mode = ChartArrangement::Mode::Single;
    result.single = *choices.enlarged;
    return result;
  }
  if (passing.size() == 1 && !choices.filter.empty()) {
    result.mode = ChartArrangement::Mode::Single;
    result.single = passing.front();
    return result;
  }
  result.mode = ChartArrangement::Mode::Grid;
  ChartSection pinned{kPinnedSection, sectionTitle(kPinnedSection), 0, false, {}};
  const auto sectionOrder = [](const QString& a, const QString& b) { return sectionLess(a, b); };
  std::map<QString, ChartSection, decltype(sectionOrder)> sections(sectionOrder);
  for (const QString& chart : passing) {
    const bool isPinned = choices.pinned.contains(chart);
    const QString name = isPinned ? kPinnedSection : chartSection(chart);
    ChartSection& section = isPinned ? pinned : sections.try_emplace(name, ChartSection{name, sectionTitle(name), 0, false, {}}).first->second;
    ++section.charts;
    section.shown.push_back(chart);
  }
  const auto finish = [&](ChartSection&& section) {
    section.collapsed = choices.collapsed.contains(section.name);
    if (section.collapsed) section.shown.clear();
    result.sections.push_back(std::move(section));
  };
  if (pinned.charts > 0) finish(std::move(pinned));
  for (auto& [name, section] : sections) finish(std::move(section));
  return result;
}

ChartFlow flowCharts(const ChartArrangement& arrangement, int columns) {
  ChartFlow flow;
  columns = std::max(1, columns);
  FlowCell next;
  const auto row = [&flow](int index) {
    if (flow.rows <= index) {
      flow.rows = index + 1;
      flow.labelled.resize(static_cast<std::size_t>(flow.rows), false);
      flow.labelOnly.resize(static_cast<std::size_t>(flow.rows), false);
    }
  };
  for (const ChartSection& section : arrangement.sections) {
    SectionFlow placed;
    if (section.shown.empty()) {
      if (next.column != 0) next = FlowCell{next.row + 1, 0};
      row(next.row);
      placed.header = next;
      placed.headerSpan = columns;
      placed.headerRow = true;
      flow.labelOnly[static_cast<std::size_t>(next.row)] = true;
      next = FlowCell{next.row + 1, 0};
      flow.sections.push_back(std::move(placed));
      continue;
    }
    row(next.row);
    placed.header = next;
    placed.headerSpan = std::min(static_cast<int>(section.shown.size()), columns - next.column);
    flow.labelled[static_cast<std::size_t>(next.row)] = true;
    for (std::size_t i = 0; i < section.shown.size(); ++i) {
      row(next.row);
      placed.charts.push_back(next);
      next = next.column + 1 < columns ? FlowCell{next.row, next.column + 1} : FlowCell{next.row + 1, 0};
    }
    flow.sections.push_back(std::move(placed));
  }
  return flow;
}

}  // namespace livemon::ui
