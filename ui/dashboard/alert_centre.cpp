#include <livemon/ui/dashboard/alert_centre.h>

#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include <livemon/ui/dashboard/dashboard_settings.h>
#include <livemon/ui/model/stat_registry.h>

namespace livemon::ui {

AlertCentre::AlertCentre(const StatRegistry& registry, DashboardSettings& settings, QObject* parent)
    : QObject(parent), registry_(registry), settings_(settings) {
  // A hand-edited settings file may hold rules that do not parse, or one twice.
  for (const QString& text : settings_.alertRules()) {
    if (parseAlertRule(text.toStdString()) && !rules_.contains(text)) rules_ << text;
  }
}

std::vector<AlertRule> AlertCentre::engineRules() const {
  std::vector<AlertRule> rules;
  for (const QString& text : rules_) {
    if (std::optional<AlertRule> rule = parseAlertRule(text.toStdString())) rules.push_back(std::move(*rule));
  }
  return rules;
}

bool AlertCentre::addRule(const QString& text, QString* error) {
  const QString trimmed = text.trimmed();
  AlertRuleError parseError;
  if (!parseAlertRule(trimmed.toStdString(), &parseError)) {
    if (error != nullptr) *error = QString::fromStdString(describeAlertRuleError(trimmed.toStdString(), parseError));
    return false;
  }
  if (!rules_.contains(trimmed)) {
    rules_ << trimmed;
    rulesEdited();
  }
  return true;
}

bool AlertCentre::removeRule(const QString& text) {
  if (!rules_.removeOne(text)) return false;
  rulesEdited();
  return true;
}

void AlertCentre::rulesEdited() {
  settings_.setAlertRules(rules_);
  emit rulesChanged();
}

void AlertCentre::raise(AlertEntry alert) {
  alerts_.append(alert);
  emit alertRaised(alert);
}

void AlertCentre::raiseStaged(const std::vector<StagedAlert>& staged) {
  for (const StagedAlert& one : staged) {
    const Alert& alert = one.alert;
    AlertEntry entry;
    entry.timeMs = std::chrono::duration<double, std::milli>(alert.time.time_since_epoch()).count();
    const SourceEntry* source = one.source ? registry_.source(*one.source) : nullptr;
    entry.source = source != nullptr ? source->label : QString::fromStdString(alertSourceName(alert.source));
    if (source != nullptr) entry.sourceId = source->id;
    const std::string_view kind = alertRuleKindName(alert.kind);
    entry.kind = QString::fromUtf8(kind.data(), static_cast<qsizetype>(kind.size()));
    entry.rule = QString::fromStdString(alert.rule);
    entry.key = QString::fromStdString(alert.key);
    entry.value = alert.value;
    entry.message = QString::fromStdString(alert.message);
    entry.step = alert.step;
    raise(std::move(entry));
  }
}

namespace {

// The unit a Stat's name gives its values, as the alert text says it ("train.compute_time_ms").
QString unitOf(const QString& stat) {
  if (stat.endsWith(QLatin1String("_ms"))) return QStringLiteral(" ms");
  if (stat.endsWith(QLatin1String("_s")) || stat.endsWith(QLatin1String("_seconds"))) return QStringLiteral(" s");
  return {};
}

}  // namespace

// A flagged rank is an alert like a rule's: listed, marked and notified once per stretch of
// flagged windows (RankScoresModel::tick reports each stretch once). Its value is what the rank
// measured (a time, for the default key), not its score: the text says both, against the median.
void AlertCentre::raiseFlaggedRanks(const std::vector<RankFlagged>& flagged, const RankScorerOptions& scoring) {
  for (const RankFlagged& rank : flagged) {
    AlertEntry entry;
    entry.timeMs = rank.timeMs;
    entry.sourceId = rank.source;
    const SourceEntry* source = rank.source ? registry_.source(*rank.source) : nullptr;
    entry.source = source != nullptr ? source->label : QStringLiteral("%1 r%2").arg(rank.run).arg(rank.score.rank);
    entry.kind = QStringLiteral("straggler");
    entry.key = QString::fromStdString(scoring.key);
    entry.rule = QStringLiteral("%1 score < %2 for %3 windows").arg(entry.key).arg(scoring.threshold).arg(scoring.windows);
    entry.value = rank.score.value;
    // "train.compute_time_ms.mean": the Stat, then the aggregation after the last dot.
    const qsizetype dot = entry.key.lastIndexOf(QLatin1Char('.'));
    const QString stat = dot > 0 ? entry.key.left(dot) : entry.key;
    const QString measured = dot > 0 ? QStringLiteral("%1 %2").arg(stat, entry.key.mid(dot + 1)) : entry.key;
    const QString value = QString::number(rank.score.value, 'g', 4) + unitOf(stat);
    const QString against = std::isfinite(rank.median) && rank.median != 0.0
                                ? tr("%1× the median of %2 ranks").arg(QString::number(rank.score.value / rank.median, 'f', 2)).arg(rank.scored)
                                : tr("against the median of %1 ranks").arg(rank.scored);
    const QString score = QString::number(rank.score.score, 'f', 2);
    entry.valueText = tr("rank %1: %2 %3, %4 (score %5)").arg(rank.score.rank).arg(measured, value, against, score);
    entry.message = tr("Rank %1 of run %2 is a straggler: its %3 is %4, %5 (a score of %6, below %7 for %8 windows).")
                        .arg(rank.score.rank)
                        .arg(rank.run, measured, value, against, score)
                        .arg(scoring.threshold)
                        .arg(scoring.windows);
    raise(std::move(entry));
  }
}

}  // namespace livemon::ui
