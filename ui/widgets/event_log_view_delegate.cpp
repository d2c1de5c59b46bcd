#include <livemon/ui/widgets/event_log_view_delegate.h>

#include <algorithm>
#include <cmath>

#include <QFontDatabase>
#include <QFontMetricsF>
#include <QPainter>

#include <livemon/ui/model/event_log_model.h>

namespace livemon::ui {

namespace {

constexpr int kPadding = 4;  // each side of a cell's text
const QString kEllipsis = QStringLiteral("…");

}  // namespace

EventLogDelegate::EventLogDelegate(QObject* parent) : QStyledItemDelegate(parent) {
  fixedFont_ = QFontDatabase::systemFont(QFontDatabase::FixedFont);  // as EventLogModel's FontRole
  fixedAdvance_ = QFontMetricsF(fixedFont_).horizontalAdvance(QLatin1Char('0'));
}

bool EventLogDelegate::isFixedPitch(int column) {
  return column == EventLogModel::TimeColumn || column == EventLogModel::StepColumn || column == EventLogModel::DataColumn;
}

QString EventLogDelegate::shownText(int column, const QString& text, int width) const {
  const int room = std::max(0, width - 2 * kPadding);
  if (isFixedPitch(column)) {
    // Whole characters of a fixed pitch: no text layout to measure them.
    const auto fits = static_cast<qsizetype>(std::floor(room / std::max(1.0, fixedAdvance_)));
    if (text.size() <= fits) return text;
    return fits <= 1 ? kEllipsis.left(fits) : text.left(fits - 1) + kEllipsis;
  }
  return label(text, column, width, QFont()).text();
}

// A Source or Name label, cut to the column's width and laid out once.
const QStaticText& EventLogDelegate::label(const QString& text, int column, int width, const QFont& font) const {
  const LabelKey key{text, column, width};
  if (const auto found = labels_.constFind(key); found != labels_.constEnd()) return *found;
  if (labels_.size() >= kMaxCached) labels_.clear();  // a new width, or many sources: start afresh
  const QString cut = QFontMetricsF(font).elidedText(text, Qt::ElideRight, std::max(0, width - 2 * kPadding));
  QStaticText laidOut(cut);
  laidOut.setTextFormat(Qt::PlainText);
  laidOut.setPerformanceHint(QStaticText::AggressiveCaching);
  laidOut.prepare(QTransform(), font);
  return *labels_.insert(key, laidOut);
}

void EventLogDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const {
  const bool selected = (option.state & QStyle::State_Selected) != 0;
  const QPalette::ColorGroup group = (option.state & QStyle::State_Enabled) != 0 ? QPalette::Normal : QPalette::Disabled;
  if (selected) painter->fillRect(option.rect, option.palette.brush(group, QPalette::Highlight));
  const QString text = index.data(Qt::DisplayRole).toString();
  if (text.isEmpty()) return;
  const int column = index.column();
  painter->save();
  painter->setPen(option.palette.color(group, selected ? QPalette::HighlightedText : QPalette::Text));
  painter->setClipRect(option.rect);
  if (isFixedPitch(column)) {
    painter->setFont(fixedFont_);
    const QFontMetricsF metrics(fixedFont_);
    const QString shown = shownText(column, text, option.rect.width());
    const double y = option.rect.top() + (option.rect.height() - metrics.height()) / 2.0 + metrics.ascent();
    // Step numbers to the right, as the model's TextAlignmentRole says.
    const double x = column == EventLogModel::StepColumn
                         ? option.rect.right() + 1 - kPadding - fixedAdvance_ * static_cast<double>(shown.size())
                         : option.rect.left() + kPadding;
    painter->drawText(QPointF(x, y), shown);
  } else {
    painter->setFont(option.font);
    const QStaticText& shown = label(text, column, option.rect.width(), option.font);
    const double y = option.rect.top() + (option.rect.height() - shown.size().height()) / 2.0;
    painter->drawStaticText(QPointF(option.rect.left() + kPadding, y), shown);
  }
  painter->restore();
}

}  // namespace livemon::ui
