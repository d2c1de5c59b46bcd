#pragma once

#include <QFont>
#include <QHash>
#include <QStaticText>
#include <QString>
#include <QStyledItemDelegate>

namespace livemon::ui {

// GUI thread only.
// Paints the event log's cells (EventLogModel's columns) at a cost that keeps up with 100 000
// events a second: one line of text per cell drawn straight with QPainter, without the style's
// item layout (QStyledItemDelegate lays every cell out as a QTextLayout, with line breaking and
// elision, through the style sheet: most of what painting the log cost). The Time, Step and Data
// columns are in the fixed-pitch font and are cut to whole characters ("…" at the end); the
// Source and Name columns repeat a few labels, kept laid out (QStaticText) for the column's
// width, at most kMaxCached of them. The selected rows take the palette's highlight.
class EventLogDelegate : public QStyledItemDelegate {
  Q_OBJECT

 public:
  static constexpr int kMaxCached = 4096;

  explicit EventLogDelegate(QObject* parent = nullptr);

  void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;

  // The text a cell of `column` shows in `width` pixels: cut with "…" when it does not fit.
  QString shownText(int column, const QString& text, int width) const;
  // The labels kept laid out (Source and Name cells), for tests.
  int cachedLabels() const noexcept { return static_cast<int>(labels_.size()); }

 private:
  static bool isFixedPitch(int column);
  const QStaticText& label(const QString& text, int column, int width, const QFont& font) const;

  QFont fixedFont_;
  double fixedAdvance_ = 0.0;  // one character of fixedFont_
  struct LabelKey {
    QString text;
    int column = 0;
    int width = 0;
    friend bool operator==(const LabelKey& a, const LabelKey& b) {
      return a.column == b.column && a.width == b.width && a.text == b.text;
    }
    friend size_t qHash(const LabelKey& key, size_t seed = 0) { return qHashMulti(seed, key.text, key.column, key.width); }
  };
  mutable QHash<LabelKey, QStaticText> labels_;
};

}  // namespace livemon::ui
