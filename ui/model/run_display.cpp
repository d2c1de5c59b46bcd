#include <livemon/ui/model/run_display.h>

#include <algorithm>
#include <vector>

#include <livemon/ui/model/run_palette.h>

namespace livemon::ui {

RunDisplay::RunDisplay(QObject* parent) : QObject(parent) {}

void RunDisplay::restoreColours(const std::map<QString, unsigned>& colours) {
  for (const auto& [run, index] : colours) {
    if (colours_.size() >= kMaxKeptColours) break;
    colours_[run] = index % kRunPaletteSize;
  }
  bump();
}

unsigned RunDisplay::assign(const QString& run) {
  if (present_.insert(run).second) {
    if (!colours_.contains(run)) {
      // Free among the runs here first, then among those kept (so a kept run that returns keeps
      // its colour to itself where it can).
      std::vector<std::size_t> uses(kRunPaletteSize, 0);
      for (const auto& [other, index] : colours_) uses[index] += present_.contains(other) ? kMaxKeptColours + 1 : 1;
      const auto least = std::min_element(uses.begin(), uses.end());
      colours_[run] = static_cast<unsigned>(least - uses.begin());
    }
    bump();
  }
  return colourIndex(run);
}

void RunDisplay::remove(const QString& run) {
  if (present_.erase(run) > 0) {
    hidden_.erase(run);
    bump();
  }
}

unsigned RunDisplay::colourIndex(const QString& run) const {
  const auto found = colours_.find(run);
  return found != colours_.end() ? found->second : 0;
}

QColor RunDisplay::colour(const QString& run) const { return runPaletteColour(colourIndex(run)); }

void RunDisplay::setShown(const QString& run, bool shown) {
  const bool changed = shown ? hidden_.erase(run) > 0 : hidden_.insert(run).second;
  if (changed) bump();
}

void RunDisplay::showOnly(const std::set<QString>& runs) {
  std::set<QString> hidden;
  for (const QString& run : present_) {
    if (!runs.contains(run)) hidden.insert(run);
  }
  if (hidden == hidden_) return;
  hidden_ = std::move(hidden);
  bump();
}

std::size_t RunDisplay::shownCount() const {
  return static_cast<std::size_t>(
      std::count_if(present_.begin(), present_.end(), [this](const QString& run) { return isShown(run); }));
}

void RunDisplay::bump() {
  ++version_;
  emit changed();
}

}  // namespace livemon::ui
