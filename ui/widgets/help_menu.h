#pragma once

#include <QUrl>

class QDialog;
class QMainWindow;

namespace livemon::ui {

// The dashboard guide, docs/dashboard.md: in the sources this livemon was built from, else in the
// installed documentation; an empty URL when neither is there.
QUrl dashboardGuideUrl();

// Adds the Help menu to `window`'s menu bar: Keyboard shortcuts (F1), the dashboard guide and
// About.
void addHelpMenu(QMainWindow& window);

// Opens (not modal: the dashboard keeps refreshing behind it) a dialog that lists the window's
// keyboard shortcuts, read from its actions, and the mouse and keys the charts and the log take.
// The dialog deletes itself when closed.
QDialog* showShortcuts(QMainWindow& window);

}  // namespace livemon::ui
