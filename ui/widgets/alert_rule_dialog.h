#pragma once

#include <QDialog>
#include <QString>

class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace livemon::ui {

// GUI thread only.
// "Alert when KEY is above/below X for N windows": builds a threshold rule's text in the grammar
// parseAlertRule reads (the same as `livemonctl watch --rule`), and accepts only text that parses.
class AlertRuleDialog : public QDialog {
  Q_OBJECT

 public:
  // Prefilled with the chart's key and its last value (the threshold), above, for 1 window.
  AlertRuleDialog(const QString& key, double lastValue, QWidget* parent = nullptr);

  void setAbove(bool above);
  void setThreshold(const QString& threshold);
  void setConsecutive(int windows);
  QLineEdit* keyEdit() const noexcept { return key_; }
  // The rule as written so far ("train.loss.mean > 2.5 for 3"); a key with blanks, quotes or
  // operator characters is quoted.
  QString ruleText() const;
  // Why the text is not a rule; empty when it is.
  QString problem() const;

  void accept() override;

 private:
  QLineEdit* key_ = nullptr;
  QComboBox* comparison_ = nullptr;
  QLineEdit* threshold_ = nullptr;
  QSpinBox* consecutive_ = nullptr;
  QLabel* preview_ = nullptr;
  void updatePreview();
};

}  // namespace livemon::ui
