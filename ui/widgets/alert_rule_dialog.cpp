#include <livemon/ui/widgets/alert_rule_dialog.h>

#include <cmath>
#include <optional>
#include <string>

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <livemon/alert_rules.h>

namespace livemon::ui {

namespace {

QString quotedKey(const QString& key) {
  bool plain = !key.isEmpty();
  for (const QChar c : key) {
    if (c.isSpace() || c == u'"' || c == u'\\' || c == u'<' || c == u'>' || c == u'=') plain = false;
  }
  if (plain) return key;
  QString escaped = key;
  escaped.replace(QStringLiteral("\\"), QStringLiteral("\\\\")).replace(QStringLiteral("\""), QStringLiteral("\\\""));
  return QStringLiteral("\"%1\"").arg(escaped);
}

}  // namespace

AlertRuleDialog::AlertRuleDialog(const QString& key, double lastValue, QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Alert rule"));
  key_ = new QLineEdit(key, this);
  comparison_ = new QComboBox(this);
  comparison_->addItem(tr("above"), QStringLiteral(">"));
  comparison_->addItem(tr("below"), QStringLiteral("<"));
  threshold_ = new QLineEdit(std::isfinite(lastValue) ? QString::number(lastValue, 'g', 6) : QStringLiteral("0"), this);
  consecutive_ = new QSpinBox(this);
  consecutive_->setRange(1, static_cast<int>(kMaxAlertConsecutive));
  consecutive_->setSuffix(tr(" value(s) in a row"));
  preview_ = new QLabel(this);
  preview_->setTextFormat(Qt::PlainText);

  auto* form = new QFormLayout;
  form->addRow(tr("Alert when"), key_);
  form->addRow(tr("is"), comparison_);
  form->addRow(tr("threshold"), threshold_);
  form->addRow(tr("for"), consecutive_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  connect(buttons, &QDialogButtonBox::accepted, this, &AlertRuleDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &AlertRuleDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(preview_);
  layout->addWidget(buttons);

  connect(key_, &QLineEdit::textChanged, this, &AlertRuleDialog::updatePreview);
  connect(comparison_, &QComboBox::currentIndexChanged, this, &AlertRuleDialog::updatePreview);
  connect(threshold_, &QLineEdit::textChanged, this, &AlertRuleDialog::updatePreview);
  connect(consecutive_, &QSpinBox::valueChanged, this, &AlertRuleDialog::updatePreview);
  updatePreview();
}

void AlertRuleDialog::setAbove(bool above) { comparison_->setCurrentIndex(above ? 0 : 1); }

void AlertRuleDialog::setThreshold(const QString& threshold) { threshold_->setText(threshold); }

void AlertRuleDialog::setConsecutive(int windows) { consecutive_->setValue(windows); }

QString AlertRuleDialog::ruleText() const {
  QString text = QStringLiteral("%1 %2 %3").arg(quotedKey(key_->text().trimmed()), comparison_->currentData().toString(),
                                                threshold_->text().trimmed());
  if (consecutive_->value() > 1) text += QStringLiteral(" for %1").arg(consecutive_->value());
  return text;
}

QString AlertRuleDialog::problem() const {
  const std::string text = ruleText().toStdString();
  AlertRuleError error;
  if (parseAlertRule(text, &error)) return {};
  return QString::fromStdString(describeAlertRuleError(text, error));
}

void AlertRuleDialog::updatePreview() {
  const QString why = problem();
  preview_->setText(why.isEmpty() ? tr("Rule: %1").arg(ruleText()) : why);
  if (auto* box = findChild<QDialogButtonBox*>()) box->button(QDialogButtonBox::Ok)->setEnabled(why.isEmpty());
}

void AlertRuleDialog::accept() {
  if (!problem().isEmpty()) return;
  QDialog::accept();
}

}  // namespace livemon::ui
