#pragma once

#include <map>
#include <string>

#include <livemon/transport/curve.h>

class QSettings;

namespace livemon::ui {

// Thread-compatible: plain functions over a QSettings the caller owns, on its thread.
//
// The CURVE certificates the Connect dialog gave each endpoint, remembered with the saved
// endpoints under the settings key "endpointCurve": the paths of the server's NAME.key and the
// client's NAME.key_secret, never a key's contents.
std::map<std::string, transport::CurveOptions> loadEndpointCurves(QSettings& settings);  // reading an array moves its position
void saveEndpointCurves(QSettings& settings, const std::map<std::string, transport::CurveOptions>& curves);

}  // namespace livemon::ui
