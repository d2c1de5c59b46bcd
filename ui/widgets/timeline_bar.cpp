#include <livemon/ui/widgets/timeline_bar.h>

#include <algorithm>
#include <cstdlib>
#include <limits>

#include <QComboBox>
#include <QDateTime>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QProxyStyle>
#include <QSignalBlocker>
#include <QSlider>
#include <QToolButton>
#include <QVBoxLayout>

#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/replay/replay_session.h>
#include <livemon/ui/widgets/timeline_strip.h>
#include <livemon/ui/widgets/dashboard_style.h>

namespace livemon::ui {

namespace {

constexpr int64_t kNsPerMs = 1'000'000;
constexpr double kSpeeds[] = {0.25, 0.5, 1, 2, 4, 8, 16, 32, 64};

// Text, not the style's media icons: those are missing where no icon theme is installed.
QToolButton* makeButton(QWidget* parent, const QString& text, const QString& tip) {
  auto* button = new QToolButton(parent);
  button->setText(text);
  button->setToolTip(tip);
  button->setAutoRaise(true);
  return button;
}

// Most styles step a page on a left click in the track and jump only on a middle click; the
// slider's tooltip promises the jump a user expects of a media timeline.
class JumpToClickStyle : public QProxyStyle {
 public:
  int styleHint(StyleHint hint, const QStyleOption* option, const QWidget* widget,
                QStyleHintReturn* returnData) const override {
    if (hint == SH_Slider_AbsoluteSetButtons) {
      return QProxyStyle::styleHint(hint, option, widget, returnData) | Qt::LeftButton;
    }
    return QProxyStyle::styleHint(hint, option, widget, returnData);
  }
};

}  // namespace

TimelineBar::TimelineBar(QWidget* parent) : QWidget(parent) {
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(6, 2, 6, 2);
  name_ = new QLabel(this);
  name_->setStyleSheet(dimTextStyle());
  stepBack_ = makeButton(this, tr("− 1 s"), tr("Step back one second"));
  play_ = makeButton(this, tr("Play"), tr("Play from the playhead"));
  play_->setMinimumWidth(56);
  stepForward_ = makeButton(this, tr("+ 1 s"), tr("Step forward one second"));
  slider_ = new QSlider(Qt::Horizontal, this);
  slider_->setMinimumWidth(300);
  slider_->setToolTip(tr("Seek: drag the playhead, or click"));
  auto* style = new JumpToClickStyle;
  style->setParent(slider_);  // the widget does not own its style
  slider_->setStyle(style);
  position_ = new QLabel(this);
  position_->setMinimumWidth(230);
  speed_ = new QComboBox(this);
  for (double speed : kSpeeds) speed_->addItem(QStringLiteral("%1×").arg(speed), speed);
  speed_->setCurrentIndex(speed_->findData(1.0));
  speed_->setToolTip(tr("Playback speed"));
  close_ = makeButton(this, tr("Close"), tr("Close the recording"));
  layout->addWidget(name_);
  layout->addWidget(stepBack_);
  layout->addWidget(play_);
  layout->addWidget(stepForward_);
  // The slider with its step labels and marks under it.
  auto* track = new QWidget(this);
  auto* trackLayout = new QVBoxLayout(track);
  trackLayout->setContentsMargins(0, 0, 0, 0);
  trackLayout->setSpacing(0);
  slider_->setParent(track);
  trackLayout->addWidget(slider_);
  strip_ = new TimelineStrip(track);
  trackLayout->addWidget(strip_);
  layout->addWidget(track, 1);
  layout->addWidget(position_);
  layout->addWidget(speed_);
  layout->addWidget(close_);

  connect(play_, &QToolButton::clicked, this, [this] {
    if (session_ != nullptr) session_->setPlaying(!session_->isPlaying());
  });
  connect(stepBack_, &QToolButton::clicked, this, [this] {
    if (session_ != nullptr) session_->step(-1);
  });
  connect(stepForward_, &QToolButton::clicked, this, [this] {
    if (session_ != nullptr) session_->step(1);
  });
  const auto seekToSlider = [this] {
    if (session_ != nullptr) session_->seek(session_->info().startNs + slider_->value() * kNsPerMs);
  };
  connect(slider_, &QSlider::sliderReleased, this, seekToSlider);
  connect(slider_, &QSlider::valueChanged, this, [this, seekToSlider] {
    // While dragging only the label follows; the seek comes on release.
    if (slider_->isSliderDown()) {
      updatePosition();
    } else {
      seekToSlider();
    }
  });
  connect(speed_, &QComboBox::currentIndexChanged, this, [this] {
    if (session_ != nullptr) session_->setSpeed(speed_->currentData().toDouble());
  });
  connect(close_, &QToolButton::clicked, this, &TimelineBar::closeRequested);
  setSession(nullptr);
}

void TimelineBar::setSession(ReplaySession* session) {
  if (session_ != nullptr) disconnect(session_, nullptr, this, nullptr);
  session_ = session;
  const bool usable = session_ != nullptr && session_->isOpen();
  for (QWidget* widget : {static_cast<QWidget*>(stepBack_), static_cast<QWidget*>(play_),
                          static_cast<QWidget*>(stepForward_), static_cast<QWidget*>(slider_),
                          static_cast<QWidget*>(speed_)}) {
    widget->setEnabled(usable);
  }
  if (session_ == nullptr) {
    name_->clear();
    position_->clear();
    strip_->setMarks({});
    marksAge_.invalidate();
    return;
  }
  strip_->setSpan(static_cast<double>(session_->info().startNs) / kNsPerMs, static_cast<double>(session_->info().endNs) / kNsPerMs);
  connect(session_, &ReplaySession::playheadChanged, this, &TimelineBar::updatePosition);
  connect(session_, &ReplaySession::playingChanged, this, &TimelineBar::updatePlaying);
  connect(session_, &ReplaySession::opened, this, [this] { setSession(session_); });
  name_->setText(QFileInfo(session_->info().path).fileName());
  name_->setToolTip(session_->info().path);
  {
    const QSignalBlocker blocker(slider_);
    const int64_t lengthMs = (session_->info().endNs - session_->info().startNs) / kNsPerMs;
    slider_->setRange(0, static_cast<int>(std::min<int64_t>(lengthMs, std::numeric_limits<int>::max())));
    slider_->setPageStep(std::max(1, slider_->maximum() / 20));
  }
  {
    const QSignalBlocker blocker(speed_);
    int best = 0;
    for (int i = 0; i < speed_->count(); ++i) {
      if (std::abs(speed_->itemData(i).toDouble() - session_->speed()) <
          std::abs(speed_->itemData(best).toDouble() - session_->speed())) {
        best = i;
      }
    }
    speed_->setCurrentIndex(best);
  }
  updatePlaying(session_->isPlaying());
  updatePosition();
}

QString TimelineBar::formatDuration(int64_t ns) {
  const int64_t tenths = std::max<int64_t>(0, ns) / 100'000'000;
  const int64_t seconds = tenths / 10;
  const QString secondsText = QStringLiteral("%1.%2").arg(seconds % 60, 2, 10, QLatin1Char('0')).arg(tenths % 10);
  if (seconds >= 3600) {
    return QStringLiteral("%1:%2:%3").arg(seconds / 3600).arg((seconds / 60) % 60, 2, 10, QLatin1Char('0')).arg(secondsText);
  }
  return QStringLiteral("%1:%2").arg(seconds / 60).arg(secondsText);
}

void TimelineBar::updateMarks(const StatRegistry& registry, const AlertListModel* alerts, bool now) {
  if (session_ == nullptr || !session_->isOpen()) return;
  if (!now && marksAge_.isValid() && marksAge_.elapsed() < kMarksIntervalMs) return;
  marksAge_.start();
  const QString endpoint = session_->endpointLabel();
  strip_->setMarks(timelineMarks(
      registry, [&endpoint](const SourceEntry& source) { return source.endpoint == endpoint; }, alerts));
}

QString TimelineBar::positionText() const { return position_->text(); }

void TimelineBar::updatePosition() {
  if (session_ == nullptr || !session_->isOpen()) return;
  const RecordingInfo& info = session_->info();
  const int64_t shownNs = slider_->isSliderDown() ? info.startNs + slider_->value() * kNsPerMs : session_->playheadNs();
  if (!slider_->isSliderDown()) {
    const QSignalBlocker blocker(slider_);
    slider_->setValue(static_cast<int>((shownNs - info.startNs) / kNsPerMs));
  }
  const QString clock = QDateTime::fromMSecsSinceEpoch(shownNs / kNsPerMs).time().toString(QStringLiteral("HH:mm:ss"));
  position_->setText(QStringLiteral("%1 / %2  (%3)")
                         .arg(formatDuration(shownNs - info.startNs), formatDuration(info.endNs - info.startNs), clock));
}

void TimelineBar::updatePlaying(bool playing) {
  // "Stop", not "Pause": the toolbar's Pause freezes the display, this stops the playback.
  play_->setText(playing ? tr("Stop") : tr("Play"));
  play_->setToolTip(playing ? tr("Stop playing; the playhead stays where it is") : tr("Play from the playhead"));
}

}  // namespace livemon::ui
