#pragma once

#include <cstddef>

#include <QColor>

namespace livemon::ui {

// The colours that tell runs apart, for colour-blind users as well: Paul Tol's "bright" scheme
// (https://personal.sron.nl/~pault/), whose colours stay distinct under the common colour-vision
// deficiencies and read on light and dark backgrounds alike. Beyond its seven, colours repeat.
inline constexpr std::size_t kRunPaletteSize = 7;

// The palette's colour `index` (modulo its size).
QColor runPaletteColour(std::size_t index);

}  // namespace livemon::ui
