// The Alerts list: checked by QAbstractItemModelTester; bounded; what each column shows; the count
// of alerts not yet seen that the badge shows.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include <QAbstractItemModelTester>
#include <QSignalSpy>

#include <livemon/ui/model/alert_list_model.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::ModelTesterMessages;

AlertEntry alertAt(double timeMs, double value = 12.5) {
  AlertEntry alert;
  alert.timeMs = timeMs;
  alert.source = QStringLiteral("train@gpu-3:4242");
  alert.kind = QStringLiteral("threshold");
  alert.rule = QStringLiteral("train.loss.mean > 10 for 3");
  alert.key = QStringLiteral("train.loss.mean");
  alert.value = value;
  alert.message = QStringLiteral("train.loss.mean was above 10 for 3 windows in a row");
  return alert;
}

TEST(AlertListModel, ShowsTimeSourceRuleAndValueWithTheMessageAsTooltip) {
  AlertListModel model;
  model.append(alertAt(1'700'000'000'000.0));
  ASSERT_EQ(model.rowCount(), 1);
  EXPECT_EQ(model.columnCount(), AlertListModel::ColumnCount);
  EXPECT_EQ(model.index(0, AlertListModel::SourceColumn).data().toString(), QStringLiteral("train@gpu-3:4242"));
  EXPECT_EQ(model.index(0, AlertListModel::RuleColumn).data().toString(), QStringLiteral("train.loss.mean > 10 for 3"));
  EXPECT_EQ(model.index(0, AlertListModel::ValueColumn).data().toString(), QStringLiteral("train.loss.mean = 12.5"));
  EXPECT_FALSE(model.index(0, AlertListModel::TimeColumn).data().toString().isEmpty());
  EXPECT_TRUE(model.index(0, AlertListModel::TimeColumn).data(Qt::ToolTipRole).toString().contains(QStringLiteral("in a row")));
  EXPECT_EQ(model.index(0, AlertListModel::RuleColumn).data(AlertListModel::kTimeRole).toDouble(), 1'700'000'000'000.0);
  EXPECT_EQ(model.headerData(AlertListModel::ValueColumn, Qt::Horizontal).toString(), QStringLiteral("Value"));

  AlertEntry nan = alertAt(1'700'000'001'000.0, std::numeric_limits<double>::quiet_NaN());
  nan.kind = QStringLiteral("nan");
  nan.rule = QStringLiteral("nan");
  model.append(nan);
  EXPECT_EQ(model.index(1, AlertListModel::ValueColumn).data().toString(), QStringLiteral("train.loss.mean = NaN"));
  EXPECT_EQ(AlertListModel::formatValue(-std::numeric_limits<double>::infinity()), QStringLiteral("-Inf"));
  AlertEntry silent = alertAt(1'700'000'002'000.0, 12.0);
  silent.kind = QStringLiteral("silent");
  silent.key.clear();
  model.append(silent);
  EXPECT_EQ(model.index(2, AlertListModel::ValueColumn).data().toString(), QStringLiteral("quiet 12 s"));
  EXPECT_FALSE(model.index(3, 0).data().isValid());
}

TEST(AlertListModel, KeepsTheNewestUpToItsCapacityAndCountsTheRest) {
  ModelTesterMessages messages;
  AlertListModel model(5);
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  for (int i = 0; i < 12; ++i) model.append(alertAt(1000.0 * i));
  EXPECT_EQ(model.rowCount(), 5);
  EXPECT_EQ(model.dropped(), 7U);
  EXPECT_EQ(model.entry(0)->timeMs, 7000.0);
  EXPECT_EQ(model.entry(4)->timeMs, 11000.0);
  EXPECT_EQ(model.entry(5), nullptr);
  model.clear();
  EXPECT_EQ(model.rowCount(), 0);
  EXPECT_TRUE(ModelTesterMessages::messages().isEmpty()) << ModelTesterMessages::messages().join(QLatin1Char('\n')).toStdString();
  EXPECT_THROW(AlertListModel(0), std::invalid_argument);
}

TEST(AlertListModel, CountsTheAlertsNotYetSeen) {
  AlertListModel model;
  QSignalSpy unseen(&model, &AlertListModel::unseenChanged);
  model.append(alertAt(1.0));
  model.append(alertAt(2.0));
  EXPECT_EQ(model.unseen(), 2U);
  ASSERT_EQ(unseen.count(), 2);
  model.markSeen();
  EXPECT_EQ(model.unseen(), 0U);
  EXPECT_EQ(unseen.count(), 3);
  model.markSeen();  // nothing new: no signal
  EXPECT_EQ(unseen.count(), 3);
  EXPECT_EQ(model.rowCount(), 2);  // seen alerts stay listed
}

}  // namespace
}  // namespace livemon::ui
