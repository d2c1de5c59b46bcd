#pragma once

#include <QString>

class QMenu;
class QWidget;

namespace livemon::ui {

class StatChartView;

// Thread-safety: for the GUI thread (they read and paint a chart widget).
// Saving what a chart shows, and the chart's context menu that offers it.

// The chart as it is on screen, as a PNG picture / an SVG drawing. On failure they return false
// with the reason in `error`.
bool saveChartPng(StatChartView& chart, const QString& path, QString* error = nullptr);
bool saveChartSvg(StatChartView& chart, const QString& path, QString* error = nullptr);
// The lines shown (not those hidden from the legend), over the visible time range, as CSV
// (writeChartCsv).
bool saveChartCsv(const StatChartView& chart, const QString& path, QString* error = nullptr);

// The chart's context menu, parented to `parent`: "Log scale" for this chart (checked as it
// draws now), "Follow live data" (undoes zoom and pan), and "Save as PNG…", "Save as SVG…",
// "Save data as CSV…", which ask where and report a failure in a message box.
QMenu* makeChartMenu(StatChartView& chart, QWidget* parent);

// A file name for the chart's exports: its name without characters file systems refuse.
QString chartFileStem(const QString& statName);

}  // namespace livemon::ui
