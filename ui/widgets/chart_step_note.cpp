#include <livemon/ui/widgets/chart_step_note.h>

#include <QBrush>
#include <QColor>
#include <QGraphicsSimpleTextItem>
#include <QtCharts/QChart>

#include <livemon/ui/widgets/dashboard_style.h>

namespace livemon::ui {

ChartStepNote::ChartStepNote(QChart* chart) : chart_(chart), note_(new QGraphicsSimpleTextItem(chart)) {
  note_->setBrush(QColor(colours::warn()));
  note_->setFont(smallFont(9));
  note_->setZValue(1000);
  note_->hide();
}

void ChartStepNote::update(bool stepAxis, const QStringList& stepless, bool anyStepped) {
  if (!stepAxis || stepless.isEmpty()) {
    note_->hide();
    return;
  }
  const QRectF plot = chart_->plotArea();
  if (!anyStepped) {
    note_->setText(QStringLiteral("No step data\nthese events state no step (livemon::setStep, livemon.set_step)"));
    const QRectF text = note_->boundingRect();
    note_->setPos(plot.center() - QPointF(text.width() / 2.0, text.height() / 2.0));
  } else {
    note_->setText(QStringLiteral("No step data: %1").arg(stepless.join(QStringLiteral(", "))));
    note_->setPos(plot.topLeft() + QPointF(6, 18));  // below the log scale's note
  }
  note_->show();
}

QString ChartStepNote::text() const { return note_->isVisible() ? note_->text() : QString(); }

}  // namespace livemon::ui
