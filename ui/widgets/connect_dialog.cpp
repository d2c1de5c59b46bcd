#include <livemon/ui/widgets/connect_dialog.h>

#include <exception>

#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

#include <livemon/transport/wire_format.h>
#include <livemon/ui/ingest/ingest_worker.h>
#include <livemon/ui/widgets/dashboard_style.h>

namespace livemon::ui {

ConnectDialog::ConnectDialog(IngestWorker& ingest, QWidget* parent) : QDialog(parent), ingest_(ingest) {
  setWindowTitle(tr("Connect to publishers"));
  setMinimumWidth(460);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(new QLabel(tr("The dashboard subscribes to these publishers:"), this));
  list_ = new QListWidget(this);
  list_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  layout->addWidget(list_, 1);

  auto* addRow = new QHBoxLayout();
  input_ = new QLineEdit(this);
  input_->setPlaceholderText(QString::fromUtf8(transport::kDefaultEndpoint.data(),
                                               static_cast<qsizetype>(transport::kDefaultEndpoint.size())));
  auto* add = new QPushButton(tr("Add"), this);
  remove_ = new QPushButton(tr("Remove selected"), this);
  addRow->addWidget(input_, 1);
  addRow->addWidget(add);
  addRow->addWidget(remove_);
  layout->addLayout(addRow);

  error_ = new QLabel(this);
  error_->setWordWrap(true);
  error_->setStyleSheet(errorTextStyle());
  error_->hide();
  layout->addWidget(error_);
  auto* hint = new QLabel(tr("Examples: tcp://127.0.0.1:5555, tcp://gpu-node-3:5555, ipc:///tmp/train.sock"), this);
  hint->setStyleSheet(dimTextStyle());
  layout->addWidget(hint);

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  layout->addWidget(buttons);

  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(add, &QPushButton::clicked, this, [this] {
    if (addEndpoint(input_->text().trimmed())) input_->clear();
  });
  connect(input_, &QLineEdit::returnPressed, this, [this] {
    if (addEndpoint(input_->text().trimmed())) input_->clear();
  });
  connect(remove_, &QPushButton::clicked, this, [this] {
    for (const QListWidgetItem* item : list_->selectedItems()) removeEndpoint(item->text());
  });
  connect(list_, &QListWidget::itemSelectionChanged, this,
          [this] { remove_->setEnabled(!list_->selectedItems().isEmpty()); });
  reload();
}

void ConnectDialog::reload() {
  list_->clear();
  for (const transport::EndpointStatus& status : ingest_.endpoints()) {
    if (status.endpoint) list_->addItem(QString::fromStdString(*status.endpoint));
  }
  remove_->setEnabled(false);
}

bool ConnectDialog::addEndpoint(const QString& endpoint) {
  if (endpoint.isEmpty()) return false;
  try {
    ingest_.addEndpoint(endpoint.toStdString());
  } catch (const std::exception& error) {
    error_->setText(QString::fromStdString(error.what()));
    error_->show();
    return false;
  }
  error_->hide();
  reload();
  emit endpointsChanged();
  return true;
}

bool ConnectDialog::removeEndpoint(const QString& endpoint) {
  const bool removed = ingest_.removeEndpoint(endpoint.toStdString());
  reload();
  if (removed) emit endpointsChanged();
  return removed;
}

QStringList ConnectDialog::endpoints() const {
  QStringList result;
  for (int i = 0; i < list_->count(); ++i) result << list_->item(i)->text();
  return result;
}

}  // namespace livemon::ui
