#pragma once

#include <optional>

#include <QColor>
#include <QFont>
#include <QPalette>
#include <QPen>
#include <QString>
#include <Qt>

class QAbstractAxis;
class QApplication;
class QChart;
class QHBoxLayout;
class QToolButton;
class QVBoxLayout;
class QWidget;

namespace livemon::ui {

// Thread-safety: the functions below touch widgets or the application and are for the GUI thread;
// the colours are constants.
// The dashboard's look, in one place: a dark Fusion palette for the widgets, the chart colours
// that go with it, the panels' header bars and the styles of secondary text. Widgets take their
// colours from here, never from literals of their own.
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

// The dark palette of the widgets.
QPalette dashboardPalette();
// Applies the Fusion style and the dark palette to the whole application.
void applyDashboardStyle(QApplication& app);

// A button on a chart card (Pin, Enlarge): its text in the card's colours, which are the chart's
// (styleChart) whatever palette the application has.
void styleCardButton(QToolButton* button);

// The colour of a source where several sources share a chart (cycles through a palette).
QColor sourceColour(unsigned index);

// The colour of a rank drawn over its group's band (picked or flagged): none of the aggregations'.
QColor rankColour(unsigned index);

// The colour of an aggregation's line when a chart shows one source.
QColor aggregationColour(const QString& aggregation);

// The dash pattern that tells aggregations apart when colour tells sources apart.
Qt::PenStyle aggregationPenStyle(const QString& aggregation);

// A style sheet for secondary text (counts, hints, placeholders) in the dim text colour, with
// `extra` declarations appended (e.g. "padding: 40px;").
QString dimTextStyle(const QString& extra = {});
// A style sheet for error text in the "bad" colour.
QString errorTextStyle();

// The default font at `pointSize`, bold or not: chart titles, legends and axis labels.
QFont smallFont(int pointSize, bool bold = false);
// A chart's frame, background, title and legend in the dashboard's colours, without animations.
void styleChart(QChart* chart);
// An axis's labels, grid and line in the dashboard's colours, without minor grid lines or title.
void styleAxis(QAbstractAxis* axis);
// An axis's title (a unit: "ms", "count") in small dim text; an empty title hides it.
void styleAxisTitle(QAbstractAxis* axis, const QString& title);

// Lays out `panel` as a column without margins and puts a header bar on top: the bold `title`,
// then what the caller adds to the returned row (filter, buttons), 6 px around. Returns the row;
// `column`, if given, receives the panel's column layout for the content below the header.
QHBoxLayout* addPanelHeader(QWidget* panel, const QString& title, QVBoxLayout** column = nullptr);

// The pen of an aggregation's line: the main ones (mean, value) widest, the band's edges (min,
// max) thin and translucent. `source`: the source's index where several share the chart (the
// colour then tells sources apart and the dash pattern aggregations); std::nullopt for one source.
QPen linePen(const QString& aggregation, std::optional<unsigned> source);
// The same in the colour `source` (a rank's: rankColour) where colour tells sources apart.
QPen linePenIn(const QString& aggregation, std::optional<QColor> source);
// The faint pen of a raw line drawn behind its smoothed line (`pen`).
QPen rawLinePen(const QPen& pen);
// The fill of a min–max band, for one source or the source `source` of several.
QColor bandFill(std::optional<unsigned> source);
// A rank group's min–max band around its median line, in the line's colour.
QColor rankBandFill(const QColor& line);

// Sort key for the legend: value, mean, p50, p90, p99, min, max, stddev, count, sum, then others.
int aggregationOrder(const QString& aggregation);

}  // namespace livemon::ui
