#include <livemon/ui/widgets/dashboard_style.h>

#include <algorithm>
#include <array>
#include <cmath>

#include <QApplication>
#include <QGraphicsLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPalette>
#include <QPen>
#include <QStyleFactory>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtCharts/QAbstractAxis>
#include <QtCharts/QChart>
#include <QtCharts/QLegend>

namespace livemon::ui {

namespace {

// Immutable after construction: any thread. One theme's colours.
struct ThemeColours {
  QRgb window, base, alternateBase, panel, border, text, dimText, grid, accent, good, warn, bad;
};

constexpr ThemeColours kDark{0xff1b1e24, 0xff14161b, 0xff1a1d23, 0xff22262e, 0xff323844, 0xffd7dae0,
                             0xff8b929e, 0xff2c313a, 0xff4fa3f7, 0xff5fce8a, 0xffe8b64c, 0xffe8615a};
constexpr ThemeColours kLight{0xfff4f5f7, 0xffffffff, 0xfff2f4f7, 0xffffffff, 0xffc9ced6, 0xff1f2328,
                              0xff5c6470, 0xffe2e5ea, 0xff1f6fd1, 0xff1e8545, 0xff9a6200, 0xffc62f2a};

Theme theme = Theme::Dark;  // GUI thread only

const ThemeColours& themeColours(Theme which) { return which == Theme::Light ? kLight : kDark; }
const ThemeColours& current() { return themeColours(theme); }

// The property that marks a chart card's button, so that a theme switch finds it again.
constexpr const char* kCardButtonProperty = "livemonCardButton";

struct AggregationStyle {
  const char* name;
  QRgb colour;
  Qt::PenStyle pen;
};

// Legend order, line colour (one source) and dash pattern (several sources).
constexpr std::array<AggregationStyle, 10> kAggregations{{
    {"value", 0xff4fc3f7, Qt::SolidLine},
    {"mean", 0xff4fa3f7, Qt::SolidLine},
    {"p50", 0xff7ed491, Qt::DashLine},
    {"p90", 0xffffb454, Qt::DotLine},
    {"p99", 0xffff6e6e, Qt::DashDotLine},
    {"min", 0xffa9b6ff, Qt::SolidLine},
    {"max", 0xffffd8a8, Qt::SolidLine},  // warm where min is cool: told apart where no band joins them
    {"stddev", 0xffc792ea, Qt::DashDotDotLine},
    {"count", 0xff4dd0c4, Qt::DashLine},
    {"sum", 0xfff78c6c, Qt::DotLine},
}};

constexpr std::array<QRgb, 8> kSourcePalette{0xff4fa3f7, 0xffffb454, 0xff7ed491, 0xffff6e6e,
                                             0xffc792ea, 0xff4dd0c4, 0xfff06292, 0xffd4e157};

// Ranks drawn over their group's band: colours no aggregation has, so a rank never wears the
// colour of the group's line it is compared with.
constexpr std::array<QRgb, 5> kRankPalette{0xffff3dd5, 0xffc6ef3b, 0xff00ffa0, 0xffffe066, 0xffb08d7e};

}  // namespace

Theme currentTheme() { return theme; }

QString themeName(Theme which) { return which == Theme::Light ? QStringLiteral("light") : QStringLiteral("dark"); }

std::optional<Theme> themeNamed(const QString& name) {
  if (name == QLatin1String("dark")) return Theme::Dark;
  if (name == QLatin1String("light")) return Theme::Light;
  return std::nullopt;
}

namespace colours {
QRgb window() { return current().window; }
QRgb base() { return current().base; }
QRgb alternateBase() { return current().alternateBase; }
QRgb panel() { return current().panel; }
QRgb border() { return current().border; }
QRgb text() { return current().text; }
QRgb dimText() { return current().dimText; }
QRgb grid() { return current().grid; }
QRgb accent() { return current().accent; }
QRgb good() { return current().good; }
QRgb warn() { return current().warn; }
QRgb bad() { return current().bad; }
}  // namespace colours

QPalette dashboardPalette() {
  QPalette palette;
  palette.setColor(QPalette::Window, QColor(colours::window()));
  palette.setColor(QPalette::WindowText, QColor(colours::text()));
  palette.setColor(QPalette::Base, QColor(colours::base()));
  palette.setColor(QPalette::AlternateBase, QColor(colours::alternateBase()));
  palette.setColor(QPalette::ToolTipBase, QColor(colours::panel()));
  palette.setColor(QPalette::ToolTipText, QColor(colours::text()));
  palette.setColor(QPalette::PlaceholderText, QColor(colours::dimText()));
  palette.setColor(QPalette::Text, QColor(colours::text()));
  palette.setColor(QPalette::Button, QColor(colours::panel()));
  palette.setColor(QPalette::ButtonText, QColor(colours::text()));
  palette.setColor(QPalette::BrightText, QColor(colours::bad()));
  palette.setColor(QPalette::Highlight, QColor(colours::accent()).darker(130));
  palette.setColor(QPalette::HighlightedText, Qt::white);
  palette.setColor(QPalette::Link, QColor(colours::accent()));
  palette.setColor(QPalette::Mid, QColor(colours::border()));
  palette.setColor(QPalette::Dark, QColor(colours::base()));
  palette.setColor(QPalette::Light, QColor(colours::border()));
  palette.setColor(QPalette::Disabled, QPalette::Text, QColor(colours::dimText()));
  palette.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(colours::dimText()));
  palette.setColor(QPalette::Disabled, QPalette::WindowText, QColor(colours::dimText()));
  return palette;
}

void applyDashboardStyle(QApplication& app) {
  app.setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
  const QPalette palette = dashboardPalette();
  app.setPalette(palette);
  app.setStyleSheet(QStringLiteral(
                        "QToolTip { color: %1; background-color: %2; border: 1px solid %3; padding: 4px; }"
                        "QToolBar { border: none; border-bottom: 1px solid %3; spacing: 6px; padding: 4px; }"
                        "QStatusBar { border-top: 1px solid %3; }"
                        "QStatusBar::item { border: none; }"
                        "QHeaderView::section { background-color: %2; color: %4; border: none;"
                        "  border-right: 1px solid %3; border-bottom: 1px solid %3; padding: 3px 6px; }"
                        "QTableView { gridline-color: %5; border: none; }"
                        "QScrollArea { border: none; }"
                        "QSplitter::handle { background-color: %3; }")
                        .arg(QColor(colours::text()).name(), QColor(colours::panel()).name(),
                             QColor(colours::border()).name(), QColor(colours::dimText()).name(),
                             QColor(colours::grid()).name()));
}

void applyTheme(QApplication& app, Theme to) {
  const ThemeColours& before = current();
  theme = to;
  const ThemeColours& after = current();
  applyDashboardStyle(app);
  // Secondary and error text carry their colour in their style sheets (dimTextStyle,
  // errorTextStyle): the old theme's colour is replaced by the new one's.
  const std::array<std::pair<QRgb, QRgb>, 5> sheetColours{{{before.dimText, after.dimText},
                                                           {before.bad, after.bad},
                                                           {before.warn, after.warn},
                                                           {before.good, after.good},
                                                           {before.accent, after.accent}}};
  for (QWidget* widget : QApplication::allWidgets()) {
    if (auto* button = qobject_cast<QToolButton*>(widget); button != nullptr && button->property(kCardButtonProperty).toBool()) {
      styleCardButton(button);
    }
    QString sheet = widget->styleSheet();
    if (sheet.isEmpty()) continue;
    for (const auto& [from, into] : sheetColours) sheet.replace(QColor(from).name(), QColor(into).name(), Qt::CaseInsensitive);
    if (sheet != widget->styleSheet()) widget->setStyleSheet(sheet);
  }
}

void styleCardButton(QToolButton* button) {
  QPalette palette = button->palette();
  for (QPalette::ColorRole role : {QPalette::ButtonText, QPalette::WindowText}) {
    palette.setColor(QPalette::Active, role, QColor(colours::text()));
    palette.setColor(QPalette::Inactive, role, QColor(colours::text()));
    palette.setColor(QPalette::Disabled, role, QColor(colours::dimText()));
  }
  button->setPalette(palette);
  button->setProperty(kCardButtonProperty, true);
}

double contrastRatio(const QColor& a, const QColor& b) {
  const auto luminance = [](const QColor& c) {
    const auto channel = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
  };
  const double la = luminance(a) + 0.05;
  const double lb = luminance(b) + 0.05;
  return la > lb ? la / lb : lb / la;
}

QColor themedLine(QColor colour) {
  if (theme == Theme::Dark) return colour;
  // On white, a line needs the contrast a pale one has on the dark plot: the same hue and
  // saturation, darker until it stands out from the plot as a chart's lines should (3.2:1).
  constexpr double kLineContrast = 3.2;
  const QColor plot(colours::window());
  const int alpha = colour.alpha();
  QColor hsl = colour.toHsl();
  while (contrastRatio(hsl, plot) < kLineContrast && hsl.lightness() > 0) {
    hsl = QColor::fromHsl(hsl.hslHue(), hsl.hslSaturation(), std::max(0, hsl.lightness() - 6));
  }
  QColor line = hsl.toRgb();
  line.setAlpha(alpha);
  return line;
}

QColor sourceColour(unsigned index) { return themedLine(QColor(kSourcePalette[index % kSourcePalette.size()])); }

QColor rankColour(unsigned index) { return themedLine(QColor(kRankPalette[index % kRankPalette.size()])); }

QColor aggregationColour(const QString& aggregation) {
  for (const AggregationStyle& style : kAggregations) {
    if (aggregation == QLatin1String(style.name)) return themedLine(QColor(style.colour));
  }
  // Unknown aggregations get a stable colour of their own.
  return sourceColour(static_cast<unsigned>(qHash(aggregation)));
}

Qt::PenStyle aggregationPenStyle(const QString& aggregation) {
  for (const AggregationStyle& style : kAggregations) {
    if (aggregation == QLatin1String(style.name)) return style.pen;
  }
  return Qt::SolidLine;
}

int aggregationOrder(const QString& aggregation) {
  for (std::size_t i = 0; i < kAggregations.size(); ++i) {
    if (aggregation == QLatin1String(kAggregations[i].name)) return static_cast<int>(i);
  }
  return static_cast<int>(kAggregations.size());
}

QString dimTextStyle(const QString& extra) {
  QString sheet = QStringLiteral("color: %1;").arg(QColor(colours::dimText()).name());
  if (!extra.isEmpty()) sheet += QLatin1Char(' ') + extra;
  return sheet;
}

QString errorTextStyle() { return QStringLiteral("color: %1;").arg(QColor(colours::bad()).name()); }

QFont smallFont(int pointSize, bool bold) {
  QFont font;
  font.setPointSize(pointSize);
  font.setBold(bold);
  return font;
}

void styleChart(QChart* chart) {
  chart->setTitleFont(smallFont(10, true));
  chart->setTitleBrush(QColor(colours::text()));
  chart->setBackgroundBrush(QColor(colours::panel()));
  chart->setBackgroundPen(QPen(QColor(colours::border())));
  chart->setBackgroundRoundness(4);
  chart->setPlotAreaBackgroundBrush(QColor(colours::window()));
  chart->setPlotAreaBackgroundVisible(true);
  chart->setMargins(QMargins(6, 2, 6, 2));
  chart->layout()->setContentsMargins(0, 0, 0, 0);
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->legend()->setFont(smallFont(8));
  chart->legend()->setLabelColor(QColor(colours::text()));
  chart->legend()->setMarkerShape(QLegend::MarkerShapeFromSeries);
}

void styleAxis(QAbstractAxis* axis) {
  axis->setLabelsColor(QColor(colours::dimText()));
  axis->setLabelsFont(smallFont(8));
  axis->setGridLineColor(QColor(colours::grid()));
  axis->setLinePenColor(QColor(colours::border()));
  axis->setMinorGridLineVisible(false);
  axis->setTitleVisible(false);
}

void restyleChartColours(QChart* chart) {
  chart->setTitleBrush(QColor(colours::text()));
  chart->setBackgroundBrush(QColor(colours::panel()));
  chart->setBackgroundPen(QPen(QColor(colours::border())));
  chart->setPlotAreaBackgroundBrush(QColor(colours::window()));
  chart->legend()->setLabelColor(QColor(colours::text()));
  for (QAbstractAxis* axis : chart->axes()) {
    axis->setLabelsColor(QColor(colours::dimText()));
    axis->setGridLineColor(QColor(colours::grid()));
    axis->setLinePenColor(QColor(colours::border()));
    axis->setTitleBrush(QColor(colours::dimText()));
  }
}

void styleAxisTitle(QAbstractAxis* axis, const QString& title) {
  axis->setTitleText(title);
  axis->setTitleFont(smallFont(8));
  axis->setTitleBrush(QColor(colours::dimText()));
  axis->setTitleVisible(!title.isEmpty());
}

QHBoxLayout* addPanelHeader(QWidget* panel, const QString& title, QVBoxLayout** column) {
  auto* layout = new QVBoxLayout(panel);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  auto* bar = new QWidget(panel);
  auto* row = new QHBoxLayout(bar);
  row->setContentsMargins(6, 6, 6, 6);
  row->addWidget(new QLabel(QStringLiteral("<b>%1</b>").arg(title.toHtmlEscaped()), bar));
  layout->addWidget(bar);
  if (column != nullptr) *column = layout;
  return row;
}

QPen linePen(const QString& aggregation, std::optional<unsigned> source) {
  return source ? linePenIn(aggregation, sourceColour(*source)) : linePenIn(aggregation, std::nullopt);
}

QPen linePenIn(const QString& aggregation, std::optional<QColor> source) {
  const bool edge = aggregation == QLatin1String("min") || aggregation == QLatin1String("max");
  const bool main = aggregation == QLatin1String("mean") || aggregation == QLatin1String("value") ||
                    aggregation == QLatin1String("rate/s");  // a running total charted as its rate
  QColor colour = source ? *source : aggregationColour(aggregation);
  // The band's edges, a little translucent (the band carries the range), yet readable on the plot
  // where there is no band (a max without a min).
  if (edge) colour.setAlpha(235);
  QPen pen(colour);
  pen.setWidthF(edge ? 1.0 : main ? 2.0 : 1.5);
  pen.setStyle(source ? aggregationPenStyle(aggregation) : Qt::SolidLine);
  pen.setCapStyle(Qt::RoundCap);
  pen.setJoinStyle(Qt::RoundJoin);
  return pen;
}

QPen rawLinePen(const QPen& pen) {
  QPen faint(pen);
  QColor colour = pen.color();
  colour.setAlpha(70);  // TensorBoard's faint raw line: there, but not competing with the smoothed one
  faint.setColor(colour);
  faint.setWidthF(1.0);
  return faint;
}

QColor bandFill(std::optional<unsigned> source) {
  QColor fill = source ? sourceColour(*source) : aggregationColour(QStringLiteral("min"));
  fill.setAlpha(source ? 40 : 55);
  return fill;
}

QColor rankBandFill(const QColor& line) {
  QColor fill = line;
  fill.setAlpha(60);
  return fill;
}

}  // namespace livemon::ui
