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

// Thread-safety: the functions below touch widgets or the application and are for the GUI thread.
// The dashboard's look, in one place: a Fusion palette for the widgets in the dark theme (the
// default) or the light one, the chart colours that go with it, the panels' header bars and the
// styles of secondary text. Widgets take their colours from here, never from literals of their
// own, and read them when they paint or style, so a theme switch reaches them.
enum class Theme { Dark, Light };

// The theme the colours below are of; Dark until setTheme (applyTheme) changes it.
Theme currentTheme();
// The theme's name as the settings and the View menu keep it ("dark", "light"), and back
// (std::nullopt for another name).
QString themeName(Theme theme);
std::optional<Theme> themeNamed(const QString& name);

namespace colours {
QRgb window();
QRgb base();
QRgb alternateBase();
QRgb panel();
QRgb border();
QRgb text();
QRgb dimText();
QRgb grid();
QRgb accent();
QRgb good();
QRgb warn();
QRgb bad();
}  // namespace colours

// The widgets' palette in the current theme.
QPalette dashboardPalette();
// Applies the Fusion style and the current theme's palette and style sheet to the whole
// application.
void applyDashboardStyle(QApplication& app);
// Switches to `theme` and restyles what is already on screen: the application's palette and style
// sheet, the secondary and error text of every widget, the chart cards' buttons, and every chart
// (StatChartView and the Ranges chart restyle themselves on the signal their window connects).
void applyTheme(QApplication& app, Theme theme);

// A button on a chart card (Pin, Enlarge): its text in the card's colours, which are the chart's
// (styleChart) whatever palette the application has.
void styleCardButton(QToolButton* button);

// A line colour as the current theme draws it: as given on the dark theme, darkened on the light
// one so that pale lines (max, p90) stay readable on a white plot.
QColor themedLine(QColor colour);
// WCAG's contrast ratio of two colours' luminances: 1 (the same) to 21 (black on white).
double contrastRatio(const QColor& a, const QColor& b);

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
// The colours of styleChart and styleAxis again, after a theme switch; nothing else changes.
void restyleChartColours(QChart* chart);
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
