#pragma once

#include <chrono>

#include <QDialog>

#include <livemon/ui/dashboard/endpoint_check.h>

class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QTimer;

namespace livemon::ui {

class IngestWorker;

// GUI thread only.
// Adds and removes the endpoints the dashboard listens to, while it runs. Changes apply at once;
// a refused endpoint (bad syntax, unknown transport, a host that does not resolve) shows the
// reason and changes nothing. A host name is looked up off the GUI thread first (EndpointChecker),
// "Looking up…" shown meanwhile; the dialog stays responsive and may be closed. An endpoint on
// which a relay reports itself is marked "relay" in the list, checked once a second. With the
// server's certificate (NAME.key) and the client's (NAME.key_secret) filled in, the endpoint is
// added with CURVE (transport::CurveOptions); a certificate that cannot be used is refused with
// its file named.
class ConnectDialog : public QDialog {
  Q_OBJECT

 public:
  enum class AddResult {
    Added,
    Refused,    // the reason is shown (errorText())
    Resolving,  // its host is being looked up: added or refused when the lookup ends
  };

  explicit ConnectDialog(IngestWorker& ingest, QWidget* parent = nullptr,
                         std::chrono::milliseconds lookupTimeout = EndpointChecker::kDefaultTimeout,
                         EndpointChecker::Lookup lookup = {});

  // What the Add button does with the text in the field.
  AddResult addEndpoint(const QString& endpoint);
  bool removeEndpoint(const QString& endpoint);
  // The certificates the next added endpoint uses (both empty: the dashboard's default).
  void setCertificates(const QString& serverCertificate, const QString& clientCertificate);
  QStringList endpoints() const;
  // Those the list marks as relays.
  QStringList relayEndpoints() const;
  // Marks the endpoints on which a relay has reported itself (the timer calls it).
  void markRelays();
  // A host lookup is under way.
  bool isChecking() const noexcept { return checker_->isChecking(); }
  // The reason the last endpoint was refused; empty after one was added.
  QString errorText() const;

 signals:
  void endpointsChanged();

 private:
  void reload();
  bool connectNow(const QString& endpoint);
  void showError(const QString& text);
  void showChecking(const QString& endpoint);

  IngestWorker& ingest_;
  QListWidget* list_ = nullptr;
  QLineEdit* input_ = nullptr;
  QLineEdit* serverCertificate_ = nullptr;
  QLineEdit* clientCertificate_ = nullptr;
  QLabel* error_ = nullptr;
  QLabel* checking_ = nullptr;
  QPushButton* add_ = nullptr;
  QPushButton* remove_ = nullptr;
  EndpointChecker* checker_ = nullptr;
  QTimer* relayCheck_ = nullptr;
};

}  // namespace livemon::ui
