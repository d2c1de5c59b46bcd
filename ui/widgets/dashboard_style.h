#pragma once

#include <QColor>
#include <QString>
#include <Qt>

class QApplication;

namespace livemon::ui {

// The dashboard's look, in one place: a dark Fusion palette for the widgets and the chart
// colours that go with it.
namespace colours {
inline constexpr QRgb kWindow = 0xff1b1e24;
inline constexpr QRgb kBase = 0xff14161b;
inline constexpr QRgb kAlternateBase = 0xff1a1d23;
inline constexpr QRgb kPanel = 0xff22262e;
inline constexpr QRgb kBorder = 0xff323844;
inline constexpr QRgb kText = 0xffd7dae0;
inline constexpr QRgb kDimText = 0xff8b929e;
inline constexpr QRgb kGrid = 0xff2c313a;
inline constexpr QRgb kAccent = 0xff4fa3f7;
inline constexpr QRgb kGood = 0xff5fce8a;
inline constexpr QRgb kWarn = 0xffe8b64c;
inline constexpr QRgb kBad = 0xffe8615a;
}  // namespace colours

// Applies the Fusion style and the dark palette to the whole application.
void applyDashboardStyle(QApplication& app);

// The colour of a source where several sources share a chart (cycles through a palette).
QColor sourceColour(unsigned index);

// The colour of an aggregation's line when a chart shows one source.
QColor aggregationColour(const QString& aggregation);

// The dash pattern that tells aggregations apart when colour tells sources apart.
Qt::PenStyle aggregationPenStyle(const QString& aggregation);

// Sort key for the legend: value, mean, p50, p90, p99, min, max, stddev, count, sum, then others.
int aggregationOrder(const QString& aggregation);

}  // namespace livemon::ui
