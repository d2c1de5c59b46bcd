#pragma once

#include <QColor>
#include <QIcon>

// Icons the dashboard draws itself, for controls whose standard icon depends on the platform's
// icon theme or style and can vanish on the dark palette (Fusion's title-bar icons are dark on
// dark; offscreen and minimal platforms have no icon theme).
namespace livemon::ui {

// Thread-compatible: a value, painted on the GUI thread.
// The chart card's Enlarge button: arrows pointing out to the corners, and in the On state (the
// chart is enlarged) arrows pointing in. Drawn in `colour` (`disabled` for a disabled button) at
// any size asked for: the caller picks the colour of what it stands on (a chart card stays dark
// whatever the application's palette).
QIcon enlargeIcon(const QColor& colour, const QColor& disabled);

}  // namespace livemon::ui
