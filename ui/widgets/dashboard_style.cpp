#include <livemon/ui/widgets/dashboard_style.h>

#include <array>

#include <QApplication>
#include <QPalette>
#include <QStyleFactory>

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
    {"min", 0xff8e9cf0, Qt::SolidLine},
    {"max", 0xff8e9cf0, Qt::SolidLine},
    {"stddev", 0xffc792ea, Qt::DashDotDotLine},
    {"count", 0xff4dd0c4, Qt::DashLine},
    {"sum", 0xfff78c6c, Qt::DotLine},
}};

constexpr std::array<QRgb, 8> kSourcePalette{0xff4fa3f7, 0xffffb454, 0xff7ed491, 0xffff6e6e,
                                             0xffc792ea, 0xff4dd0c4, 0xfff06292, 0xffd4e157};

}  // namespace

void applyDashboardStyle(QApplication& app) {
  app.setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
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

QColor sourceColour(unsigned index) { return QColor(kSourcePalette[index % kSourcePalette.size()]); }

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

}  // namespace livemon::ui
