#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <livemon/event.h>
#include <livemon/run_config.h>

// `--config KEY=VALUE[,KEY=VALUE...]`: a run's config on the command line (livemonctl demo).
// Thread-safe: pure functions.
namespace livemon::livemonctl {

// A value as typed: an int64 when the whole text is one ("64", "-3"), else a double ("3e-4",
// "0.5"), else a bool ("true", "false"), else the text itself ("adam").
DataValue parseConfigValue(std::string_view text);

// The config of KEY=VALUE entries, a later entry replacing an earlier one of its key. Throws
// std::invalid_argument naming the entry for one without '=', with an empty key or the key "step"
// (the event's own step).
RunConfig parseConfigEntries(const std::vector<std::string>& entries);

}  // namespace livemon::livemonctl
