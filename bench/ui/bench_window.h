// What the dashboard benchmarks share: the window they measure in.
#pragma once

#include <memory>

#include <QCoreApplication>
#include <QString>

#include <livemon/ui/widgets/main_window.h>

namespace livemon::bench {

// A fresh MainWindow on no endpoint (only what the benchmark opens), with its settings in
// `settingsFile`, showing `range`, 1600×1000, shown and painted once.
inline std::unique_ptr<ui::MainWindow> benchWindow(const QString& settingsFile, ui::TimeRange range,
                                                   const ui::RunFolderLimits& folderLimits = {}) {
  ui::DashboardOptions options;
  options.folderLimits = folderLimits;
  options.exactEndpoints = true;
  options.settingsFile = settingsFile;
  auto window = std::make_unique<ui::MainWindow>(options);
  window->setTimeRange(range);
  window->resize(1600, 1000);
  window->show();
  QCoreApplication::processEvents();
  return window;
}

}  // namespace livemon::bench
