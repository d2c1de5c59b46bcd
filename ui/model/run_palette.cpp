#include <livemon/ui/model/run_palette.h>

#include <array>

#include <QRgb>

namespace livemon::ui {

namespace {

// In Tol's order: blue, red, green, yellow, cyan, purple, grey.
constexpr std::array<QRgb, kRunPaletteSize> kBright{0x4477AA, 0xEE6677, 0x228833, 0xCCBB44,
                                                    0x66CCEE, 0xAA3377, 0xBBBBBB};

}  // namespace

QColor runPaletteColour(std::size_t index) { return QColor(kBright[index % kBright.size()]); }

}  // namespace livemon::ui
