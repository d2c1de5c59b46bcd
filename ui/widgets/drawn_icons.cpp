#include <livemon/ui/widgets/drawn_icons.h>

#include <algorithm>
#include <array>

#include <QIconEngine>
#include <QPainter>
#include <QPainterPath>
#include <QPen>
#include <QPixmap>

namespace livemon::ui {

namespace {

// Draws the glyph at the size asked for (sharp at any device pixel ratio), in either state.
class EnlargeIconEngine : public QIconEngine {
 public:
  EnlargeIconEngine(QColor colour, QColor disabled) : colour_(colour), disabled_(disabled) {}

  void paint(QPainter* painter, const QRect& rect, QIcon::Mode mode, QIcon::State state) override {
    const QColor colour = mode == QIcon::Disabled ? disabled_ : colour_;
    const double side = std::min(rect.width(), rect.height());
    const QRectF box(rect.x() + (rect.width() - side) / 2.0, rect.y() + (rect.height() - side) / 2.0, side, side);
    const double pad = side * 0.16;
    const QRectF inner = box.adjusted(pad, pad, -pad, -pad);
    const double arm = inner.width() * 0.34;  // each corner's two strokes

    painter->save();
    painter->setRenderHint(QPainter::Antialiasing);
    QPen pen(colour, std::max(1.5, side / 10.0));
    pen.setCapStyle(Qt::SquareCap);
    pen.setJoinStyle(Qt::MiterJoin);
    painter->setPen(pen);
    // Off: a bracket at each corner, its angle on the corner (the usual "full screen" glyph).
    // On (enlarged): each bracket moved in by its own length and turned round, its angle
    // pointing back to the middle.
    const bool in = state == QIcon::On;
    const std::array<QPointF, 4> corners{inner.topLeft(), inner.topRight(), inner.bottomRight(), inner.bottomLeft()};
    const QPointF middle = inner.center();
    for (const QPointF& corner : corners) {
      const double dx = corner.x() < middle.x() ? 1.0 : -1.0;  // towards the middle
      const double dy = corner.y() < middle.y() ? 1.0 : -1.0;
      const QPointF angle = in ? corner + QPointF(dx * arm, dy * arm) : corner;
      const double sx = in ? -dx : dx;
      const double sy = in ? -dy : dy;
      QPainterPath path(angle + QPointF(sx * arm, 0.0));
      path.lineTo(angle);
      path.lineTo(angle + QPointF(0.0, sy * arm));
      painter->drawPath(path);
    }
    painter->restore();
  }

  QIconEngine* clone() const override { return new EnlargeIconEngine(colour_, disabled_); }

  QPixmap pixmap(const QSize& size, QIcon::Mode mode, QIcon::State state) override {
    QPixmap result(size);
    result.fill(Qt::transparent);
    QPainter painter(&result);
    paint(&painter, QRect(QPoint(0, 0), size), mode, state);
    return result;
  }

 private:
  QColor colour_;
  QColor disabled_;
};

}  // namespace

QIcon enlargeIcon(const QColor& colour, const QColor& disabled) {
  return QIcon(new EnlargeIconEngine(colour, disabled));
}

}  // namespace livemon::ui
