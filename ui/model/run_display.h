#pragma once

#include <cstddef>
#include <map>
#include <set>

#include <QColor>
#include <QObject>
#include <QString>

namespace livemon::ui {

// GUI thread only.
// How the runs are shown, shared by the Runs panel and every chart: each run's colour (an index
// into the colour-blind-safe run palette, run_palette.h) and which runs are shown. A run's colour
// is given when it is first named (assign): the one kept for its name from an earlier session
// (restoreColours), else the palette's first that no run here has (and, where it can, no run
// kept has). changed() follows every change and version() counts them, so a chart knows to redraw.
class RunDisplay : public QObject {
  Q_OBJECT

 public:
  // Colours restored at most (a settings file is edited by hand too).
  static constexpr std::size_t kMaxKeptColours = 1024;

  explicit RunDisplay(QObject* parent = nullptr);

  // The colours of an earlier session (run name → palette index), before the first assign.
  void restoreColours(const std::map<QString, unsigned>& colours);
  // Every colour given, kept and new, to save for the next session.
  const std::map<QString, unsigned>& colours() const noexcept { return colours_; }

  // Makes `run` known (shown): it takes its kept colour, or a free one (see above; the least used
  // when none is free). Returns its palette index.
  unsigned assign(const QString& run);
  // Forgets that `run` is present (its recording closed): its colour is free again, but kept.
  void remove(const QString& run);
  bool isKnown(const QString& run) const { return present_.contains(run); }

  // The run's palette index and colour; a run never assigned has the palette's first.
  unsigned colourIndex(const QString& run) const;
  QColor colour(const QString& run) const;

  // Runs are shown unless hidden; a hidden run's lines leave every chart.
  bool isShown(const QString& run) const { return !hidden_.contains(run); }
  void setShown(const QString& run, bool shown);
  // Shows exactly `runs` among those known.
  void showOnly(const std::set<QString>& runs);
  // Known runs that are shown.
  std::size_t shownCount() const;

  unsigned version() const noexcept { return version_; }

 signals:
  void changed();

 private:
  void bump();

  std::map<QString, unsigned> colours_;
  std::set<QString> present_;
  std::set<QString> hidden_;
  unsigned version_ = 0;
};

}  // namespace livemon::ui
