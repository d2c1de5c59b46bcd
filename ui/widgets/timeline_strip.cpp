#include <livemon/ui/widgets/timeline_strip.h>

#include <cmath>

#include <QDateTime>
#include <QHelpEvent>
#include <QLocale>
#include <QPainter>
#include <QToolTip>

#include <livemon/ui/widgets/dashboard_style.h>

namespace livemon::ui {

namespace {
constexpr int kMarkHeight = 6;
constexpr int kLabelSpacing = 110;  // pixels between step labels at least
constexpr int kHoverPixels = 4;
// The slider's groove starts and ends about this far in from its edges.
constexpr int kInset = 8;
}  // namespace

TimelineStrip::TimelineStrip(QWidget* parent) : QWidget(parent) {
  setMinimumHeight(sizeHint().height());
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

QSize TimelineStrip::sizeHint() const { return {300, fontMetrics().height() + kMarkHeight + 4}; }

void TimelineStrip::setSpan(double startMs, double endMs) {
  startMs_ = startMs;
  endMs_ = endMs;
  update();
}

void TimelineStrip::setMarks(TimelineMarks marks) {
  if (marks.steps == marks_.steps && marks.marks == marks_.marks) return;
  marks_ = std::move(marks);
  update();
}

int TimelineStrip::xOf(double ms) const {
  const double span = endMs_ - startMs_;
  const double fraction = span > 0.0 ? std::clamp((ms - startMs_) / span, 0.0, 1.0) : 0.0;
  return kInset + static_cast<int>(std::lround(fraction * std::max(1, width() - 2 * kInset)));
}

std::vector<std::pair<int, QString>> TimelineStrip::stepLabels() const {
  std::vector<std::pair<int, QString>> labels;
  if (marks_.steps.empty() || !(endMs_ > startMs_)) return labels;
  const int count = std::max(2, (width() - 2 * kInset) / kLabelSpacing + 1);
  double last = std::numeric_limits<double>::quiet_NaN();
  for (int i = 0; i < count; ++i) {
    const double ms = startMs_ + (endMs_ - startMs_) * i / (count - 1);
    const double step = stepAt(marks_.steps, ms);
    if (std::isnan(step) || step == last) continue;
    last = step;
    labels.emplace_back(xOf(ms), tr("step %1").arg(QLocale().toString(static_cast<qlonglong>(std::llround(step)))));
  }
  return labels;
}

QString TimelineStrip::toolTipAt(int x) const {
  QStringList lines;
  for (const TimelineMark& mark : marks_.marks) {
    if (std::abs(xOf(mark.ms) - x) > kHoverPixels) continue;
    const QString time = QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(std::llround(mark.ms))).time().toString(QStringLiteral("HH:mm:ss"));
    const double step = stepAt(marks_.steps, mark.ms);
    lines << (std::isnan(step) ? tr("%1 at %2").arg(mark.label, time)
                               : tr("%1 at %2, step %3").arg(mark.label, time).arg(static_cast<qlonglong>(std::llround(step))));
    if (lines.size() == 8) break;
  }
  return lines.join(QLatin1Char('\n'));
}

bool TimelineStrip::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const QString text = toolTipAt(help->pos().x());
    if (text.isEmpty()) {
      QToolTip::hideText();
    } else {
      QToolTip::showText(help->globalPos(), text, this);
    }
    return true;
  }
  return QWidget::event(event);
}

void TimelineStrip::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing);
  for (const TimelineMark& mark : marks_.marks) {
    const int x = xOf(mark.ms);
    painter.setPen(QPen(QColor(mark.alert ? colours::bad() : colours::accent()), mark.alert ? 2 : 1));
    painter.drawLine(x, 0, x, kMarkHeight);
  }
  painter.setPen(QColor(colours::dimText()));
  const int baseline = kMarkHeight + 2 + fontMetrics().ascent();
  for (const auto& [x, text] : stepLabels()) {
    const int textWidth = fontMetrics().horizontalAdvance(text);
    const int left = std::clamp(x - textWidth / 2, 0, std::max(0, width() - textWidth));
    painter.drawText(left, baseline, text);
  }
}

}  // namespace livemon::ui
