#pragma once

#include <cstdint>
#include <optional>
#include <string>

// The --from/--to values of `livemonctl export`: where in a recording to start and stop.
namespace livemon::livemonctl {

// The latest time a bound can name: log times in a recording are unsigned 64-bit nanoseconds
// since the Unix epoch, which end at 2554-07-21T23:34:33.709551615Z.
inline constexpr uint64_t kLatestTimeBoundNs = UINT64_MAX;

// Parses a bound on a recording that starts at `startNs` (nanoseconds since the Unix epoch):
//  - seconds from the start, a non-negative decimal number ("90", "1.5", "2e3"), rounded to the
//    nanosecond;
//  - or an absolute UTC time "YYYY-MM-DDTHH:MM:SS[.fraction]Z" (digits beyond nanoseconds are
//    ignored), from 1970 on, with every field in its calendar range (no 2025-02-30).
// Returns the bound in nanoseconds since the Unix epoch, or std::nullopt when `text` is neither
// form or names a time after kLatestTimeBoundNs; then `error`, when given, says which.
// Thread-safe: a pure function.
std::optional<uint64_t> parseTimeBound(const std::string& text, uint64_t startNs, std::string* error = nullptr);

}  // namespace livemon::livemonctl
