#include <livemon/ui/widgets/connect_dialog.h>

#include <exception>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>

#include <livemon/transport/wire_format.h>
#include <livemon/ui/ingest/ingest_worker.h>
#include <livemon/ui/dashboard/endpoint_health.h>
#include <livemon/ui/widgets/dashboard_style.h>

namespace livemon::ui {

namespace {

// The list shows "tcp://head:5555 — relay"; the endpoint itself rides along under this role.
constexpr int kEndpointRole = Qt::UserRole;
constexpr int kRelayRole = Qt::UserRole + 1;

}  // namespace

ConnectDialog::ConnectDialog(IngestWorker& ingest, QWidget* parent, std::chrono::milliseconds lookupTimeout,
                             EndpointChecker::Lookup lookup)
    : QDialog(parent), ingest_(ingest), checker_(new EndpointChecker(lookupTimeout, std::move(lookup), this)) {
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
  add_ = new QPushButton(tr("Add"), this);
  remove_ = new QPushButton(tr("Remove selected"), this);
  addRow->addWidget(input_, 1);
  addRow->addWidget(add_);
  addRow->addWidget(remove_);
  layout->addLayout(addRow);
  // CURVE: paths only; the dashboard remembers them with the endpoint, never the keys.
  auto* curveRow = new QHBoxLayout();
  serverCertificate_ = new QLineEdit(this);
  serverCertificate_->setPlaceholderText(tr("CURVE: server's NAME.key (optional)"));
  clientCertificate_ = new QLineEdit(this);
  clientCertificate_->setPlaceholderText(tr("your NAME.key_secret"));
  curveRow->addWidget(serverCertificate_, 1);
  curveRow->addWidget(clientCertificate_, 1);
  layout->addLayout(curveRow);

  error_ = new QLabel(this);
  error_->setWordWrap(true);
  error_->setStyleSheet(errorTextStyle());
  error_->hide();
  layout->addWidget(error_);
  checking_ = new QLabel(this);
  checking_->setStyleSheet(dimTextStyle());
  checking_->hide();
  layout->addWidget(checking_);
  auto* hint = new QLabel(tr("Examples: tcp://127.0.0.1:5555, tcp://gpu-node-3:5555, ipc:///tmp/train.sock\n"
                             "A relay: tcp://head:5555 (livemonctl relay --serve), every rank behind it at once"),
                          this);
  hint->setStyleSheet(dimTextStyle());
  layout->addWidget(hint);

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  layout->addWidget(buttons);

  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  const auto addInput = [this] {
    if (addEndpoint(input_->text().trimmed()) == AddResult::Added) input_->clear();
  };
  connect(add_, &QPushButton::clicked, this, addInput);
  connect(input_, &QLineEdit::returnPressed, this, addInput);
  connect(checker_, &EndpointChecker::resolved, this, [this](const QString& endpoint, const QString& error) {
    checking_->hide();
    add_->setEnabled(true);
    if (!error.isEmpty()) {
      showError(error);
    } else if (connectNow(endpoint) && input_->text().trimmed() == endpoint) {
      input_->clear();
    }
  });
  connect(remove_, &QPushButton::clicked, this, [this] {
    QStringList selected;
    for (const QListWidgetItem* item : list_->selectedItems()) selected << item->data(kEndpointRole).toString();
    for (const QString& endpoint : selected) removeEndpoint(endpoint);
  });
  connect(list_, &QListWidget::itemSelectionChanged, this,
          [this] { remove_->setEnabled(!list_->selectedItems().isEmpty()); });
  // A relay shows itself only once its first report arrives, seconds after connecting.
  relayCheck_ = new QTimer(this);
  relayCheck_->setInterval(std::chrono::seconds(1));
  connect(relayCheck_, &QTimer::timeout, this, &ConnectDialog::markRelays);
  relayCheck_->start();
  reload();
}

void ConnectDialog::reload() {
  list_->clear();
  for (const transport::EndpointStatus& status : ingest_.endpoints()) {
    if (!status.endpoint) continue;
    auto* item = new QListWidgetItem(QString::fromStdString(*status.endpoint), list_);
    item->setData(kEndpointRole, item->text());
    item->setData(kRelayRole, false);
  }
  remove_->setEnabled(false);
  markRelays();
}

void ConnectDialog::markRelays() {
  const std::set<std::string> relays = ui::relayEndpoints(ingest_.sources());
  for (int i = 0; i < list_->count(); ++i) {
    QListWidgetItem* item = list_->item(i);
    const QString endpoint = item->data(kEndpointRole).toString();
    const bool relay = relays.contains(endpoint.toStdString());
    if (item->data(kRelayRole).toBool() == relay) continue;
    item->setData(kRelayRole, relay);
    item->setText(relay ? tr("%1 — relay").arg(endpoint) : endpoint);
  }
}

QStringList ConnectDialog::relayEndpoints() const {
  QStringList result;
  for (int i = 0; i < list_->count(); ++i) {
    if (list_->item(i)->data(kRelayRole).toBool()) result << list_->item(i)->data(kEndpointRole).toString();
  }
  return result;
}

ConnectDialog::AddResult ConnectDialog::addEndpoint(const QString& endpoint) {
  if (endpoint.isEmpty()) return AddResult::Refused;
  const EndpointVerdict verdict = checker_->check(endpoint);
  switch (verdict.state) {
    case EndpointVerdict::State::Refused:
      checking_->hide();
      add_->setEnabled(true);
      showError(verdict.error);
      return AddResult::Refused;
    case EndpointVerdict::State::Resolving:
      showChecking(endpoint);
      return AddResult::Resolving;
    case EndpointVerdict::State::Usable:
      break;
  }
  checking_->hide();
  add_->setEnabled(true);
  return connectNow(endpoint) ? AddResult::Added : AddResult::Refused;
}

void ConnectDialog::setCertificates(const QString& serverCertificate, const QString& clientCertificate) {
  serverCertificate_->setText(serverCertificate);
  clientCertificate_->setText(clientCertificate);
}

bool ConnectDialog::connectNow(const QString& endpoint) {
  const QString server = serverCertificate_->text().trimmed();
  const QString client = clientCertificate_->text().trimmed();
  std::optional<transport::CurveOptions> curve;
  if (!server.isEmpty() || !client.isEmpty()) {
    if (server.isEmpty() || client.isEmpty()) {
      showError(tr("CURVE needs both the server's certificate (NAME.key) and yours (NAME.key_secret)"));
      return false;
    }
    curve = transport::CurveOptions{client.toStdString(), "", server.toStdString(), false};
  }
  try {
    ingest_.addEndpoint(endpoint.toStdString(), curve);
  } catch (const std::exception& error) {
    showError(QString::fromStdString(error.what()));
    return false;
  }
  error_->clear();
  error_->hide();
  reload();
  emit endpointsChanged();
  return true;
}

void ConnectDialog::showError(const QString& text) {
  error_->setText(text);
  error_->show();
}

void ConnectDialog::showChecking(const QString& endpoint) {
  error_->clear();
  error_->hide();
  checking_->setText(tr("Looking up %1…").arg(endpoint));
  checking_->show();
  add_->setEnabled(false);  // one lookup at a time; a new text may still be typed
}

QString ConnectDialog::errorText() const { return error_->text(); }

bool ConnectDialog::removeEndpoint(const QString& endpoint) {
  const bool removed = ingest_.removeEndpoint(endpoint.toStdString());
  reload();
  if (removed) emit endpointsChanged();
  return removed;
}

QStringList ConnectDialog::endpoints() const {
  QStringList result;
  for (int i = 0; i < list_->count(); ++i) result << list_->item(i)->data(kEndpointRole).toString();
  return result;
}

}  // namespace livemon::ui
