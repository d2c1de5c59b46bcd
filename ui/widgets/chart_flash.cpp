#include <livemon/ui/widgets/chart_flash.h>

#include <QColor>
#include <QPainter>
#include <QPen>
#include <QTimer>

#include <livemon/ui/widgets/dashboard_style.h>

namespace livemon::ui {

namespace {
constexpr int kFrameWidth = 4;
}  // namespace

ChartFlash::ChartFlash(QWidget& chart) : QWidget(&chart), timer_(new QTimer(this)) {
  setObjectName(QStringLiteral("chartFlash"));
  setAttribute(Qt::WA_TransparentForMouseEvents);
  setAttribute(Qt::WA_NoSystemBackground);
  timer_->setSingleShot(true);
  timer_->setInterval(kDurationMs);
  connect(timer_, &QTimer::timeout, this, &QWidget::hide);
  hide();
}

ChartFlash* ChartFlash::flash(QWidget& chart) {
  auto* flash = chart.findChild<ChartFlash*>(QString(), Qt::FindDirectChildrenOnly);
  if (flash == nullptr) flash = new ChartFlash(chart);
  flash->setGeometry(chart.rect());
  flash->raise();
  flash->show();
  flash->timer_->start();
  return flash;
}

void ChartFlash::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setPen(QPen(QColor(colours::bad()), kFrameWidth));
  painter.setBrush(Qt::NoBrush);
  const int inset = kFrameWidth / 2;
  painter.drawRect(rect().adjusted(inset, inset, -inset, -inset));
}

}  // namespace livemon::ui
