#pragma once

#include <QDialog>

class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;

namespace livemon::ui {

class IngestWorker;

// Thread-compatible: a widget, used on the GUI thread only.
// Adds and removes the endpoints the dashboard listens to, while it runs. Changes apply at once;
// a refused endpoint (bad syntax, unknown transport) shows the reason and changes nothing.
class ConnectDialog : public QDialog {
  Q_OBJECT

 public:
  explicit ConnectDialog(IngestWorker& ingest, QWidget* parent = nullptr);

  // What the Add button does with the text in the field; returns false (and shows why) when
  // the endpoint was refused.
  bool addEndpoint(const QString& endpoint);
  bool removeEndpoint(const QString& endpoint);
  QStringList endpoints() const;

 signals:
  void endpointsChanged();

 private:
  void reload();

  IngestWorker& ingest_;
  QListWidget* list_ = nullptr;
  QLineEdit* input_ = nullptr;
  QLabel* error_ = nullptr;
  QPushButton* remove_ = nullptr;
};

}  // namespace livemon::ui
