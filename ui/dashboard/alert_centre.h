#pragma once

#include <vector>

#include <QObject>
#include <QString>
#include <QStringList>

#include <livemon/alert_rules.h>
#include <livemon/rank_scores.h>
#include <livemon/ui/data/ingest_batch.h>
#include <livemon/ui/model/alert_list_model.h>
#include <livemon/ui/model/rank_scores_model.h>

namespace livemon::ui {

class DashboardSettings;
class StatRegistry;

// GUI thread only.
// Where the dashboard's alerts come together: the list every view shows (alerts()), the user's
// rules, and the raising of an alert from each place one comes from: a rule the ingest thread's
// AlertEngine found triggered (raiseStaged), a rank RankScorer flagged (raiseFlaggedRanks), or a
// caller (raise). Every alert raised is listed first, then told to the views by alertRaised(),
// which mark the chart, update the badge and notify the desktop.
//
// The rules (the built-in nan, silent and loss always run beside them) are saved in the settings
// and restored at construction; rulesChanged() tells whoever runs them (the Dashboard hands
// engineRules() to the IngestWorker).
class AlertCentre : public QObject {
  Q_OBJECT

 public:
  // `registry` labels the sources; it and `settings` must outlive the centre.
  AlertCentre(const StatRegistry& registry, DashboardSettings& settings, QObject* parent = nullptr);

  AlertListModel& alerts() noexcept { return alerts_; }
  const AlertListModel& alerts() const noexcept { return alerts_; }

  // The rules as the user wrote them (those saved that do not parse are left out), in order.
  const QStringList& rules() const noexcept { return rules_; }
  // The same, as AlertEngine takes them.
  std::vector<AlertRule> engineRules() const;
  // Adds a rule (one already there is not added twice). False, with `error` set to what
  // describeAlertRuleError says, when the text is not a rule.
  bool addRule(const QString& text, QString* error = nullptr);
  bool removeRule(const QString& text);

  void raise(AlertEntry alert);
  // The rule engine's alerts, with their sources labelled as the registry labels them (a source
  // the limits refused keeps its description).
  void raiseStaged(const std::vector<StagedAlert>& staged);
  // A "straggler" alert per rank RankScoresModel::tick flagged under `scoring`.
  void raiseFlaggedRanks(const std::vector<RankFlagged>& flagged, const RankScorerOptions& scoring);

 signals:
  // An alert was raised; it is already in alerts().
  void alertRaised(const AlertEntry& alert);
  void rulesChanged();

 private:
  void rulesEdited();

  const StatRegistry& registry_;
  DashboardSettings& settings_;
  AlertListModel alerts_;
  QStringList rules_;
};

}  // namespace livemon::ui
