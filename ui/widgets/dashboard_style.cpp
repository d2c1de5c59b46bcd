#include <livemon/ui/widgets/dashboard_style.h>

#include <algorithm>
#include <array>

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

QPalette dashboardPalette() {
  QPalette palette;
  palette.setColor(QPalette::Window, QColor(colours::kWindow));
  palette.setColor(QPalette::WindowText, QColor(colours::kText));
  palette.setColor(QPalette::Base, QColor(colours::kBase));
  palette.setColor(QPalette::AlternateBase, QColor(colours::kAlternateBase));
  palette.setColor(QPalette::ToolTipBase, QColor(colours::kPanel));
  palette.setColor(QPalette::ToolTipText, QColor(colours::kText));
  palette.setColor(QPalette::PlaceholderText, QColor(colours::kDimText));
  palette.setColor(QPalette::Text, QColor(colours::kText));
  palette.setColor(QPalette::Button, QColor(colours::kPanel));
  palette.setColor(QPalette::ButtonText, QColor(colours::kText));
  palette.setColor(QPalette::BrightText, QColor(colours::kBad));
  palette.setColor(QPalette::Highlight, QColor(colours::kAccent).darker(130));
  palette.setColor(QPalette::HighlightedText, Qt::white);
  palette.setColor(QPalette::Link, QColor(colours::kAccent));
  palette.setColor(QPalette::Mid, QColor(colours::kBorder));
  palette.setColor(QPalette::Dark, QColor(colours::kBase));
  palette.setColor(QPalette::Light, QColor(colours::kBorder));
  palette.setColor(QPalette::Disabled, QPalette::Text, QColor(colours::kDimText));
  palette.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(colours::kDimText));
  palette.setColor(QPalette::Disabled, QPalette::WindowText, QColor(colours::kDimText));
  return palette;
}

void applyDashboardStyle(QApplication& app) {
  app.setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
  const QPalette palette = dashboardPalette();
  app.setPalette(palette);
  app.setStyleSheet(QStringLiteral(
      "QToolTip { color: #d7dae0; background-color: #22262e; border: 1px solid #323844; padding: 4px; }"
      "QToolBar { border: none; border-bottom: 1px solid #323844; spacing: 6px; padding: 4px; }"
      "QStatusBar { border-top: 1px solid #323844; }"
      "QStatusBar::item { border: none; }"
      "QHeaderView::section { background-color: #22262e; color: #8b929e; border: none;"
      "  border-right: 1px solid #323844; border-bottom: 1px solid #323844; padding: 3px 6px; }"
      "QTableView { gridline-color: #2c313a; border: none; }"
      "QScrollArea { border: none; }"
      "QSplitter::handle { background-color: #323844; }"));
}

void styleCardButton(QToolButton* button) {
  QPalette palette = button->palette();
  for (QPalette::ColorRole role : {QPalette::ButtonText, QPalette::WindowText}) {
    palette.setColor(QPalette::Active, role, QColor(colours::kText));
    palette.setColor(QPalette::Inactive, role, QColor(colours::kText));
    palette.setColor(QPalette::Disabled, role, QColor(colours::kDimText));
  }
  button->setPalette(palette);
}

QColor sourceColour(unsigned index) { return QColor(kSourcePalette[index % kSourcePalette.size()]); }

QColor rankColour(unsigned index) { return QColor(kRankPalette[index % kRankPalette.size()]); }

QColor aggregationColour(const QString& aggregation) {
  for (const AggregationStyle& style : kAggregations) {
    if (aggregation == QLatin1String(style.name)) return QColor(style.colour);
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
  QString sheet = QStringLiteral("color: %1;").arg(QColor(colours::kDimText).name());
  if (!extra.isEmpty()) sheet += QLatin1Char(' ') + extra;
  return sheet;
}

QString errorTextStyle() { return QStringLiteral("color: %1;").arg(QColor(colours::kBad).name()); }

QFont smallFont(int pointSize, bool bold) {
  QFont font;
  font.setPointSize(pointSize);
  font.setBold(bold);
  return font;
}

void styleChart(QChart* chart) {
  chart->setTitleFont(smallFont(10, true));
  chart->setTitleBrush(QColor(colours::kText));
  chart->setBackgroundBrush(QColor(colours::kPanel));
  chart->setBackgroundPen(QPen(QColor(colours::kBorder)));
  chart->setBackgroundRoundness(4);
  chart->setPlotAreaBackgroundBrush(QColor(colours::kWindow));
  chart->setPlotAreaBackgroundVisible(true);
  chart->setMargins(QMargins(6, 2, 6, 2));
  chart->layout()->setContentsMargins(0, 0, 0, 0);
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->legend()->setFont(smallFont(8));
  chart->legend()->setLabelColor(QColor(colours::kText));
  chart->legend()->setMarkerShape(QLegend::MarkerShapeFromSeries);
}

void styleAxis(QAbstractAxis* axis) {
  axis->setLabelsColor(QColor(colours::kDimText));
  axis->setLabelsFont(smallFont(8));
  axis->setGridLineColor(QColor(colours::kGrid));
  axis->setLinePenColor(QColor(colours::kBorder));
  axis->setMinorGridLineVisible(false);
  axis->setTitleVisible(false);
}

void styleAxisTitle(QAbstractAxis* axis, const QString& title) {
  axis->setTitleText(title);
  axis->setTitleFont(smallFont(8));
  axis->setTitleBrush(QColor(colours::kDimText));
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
