#pragma once

#include <string>
#include <string_view>

namespace livemon {

// JSON string literals for text livemon writes as JSON (Chrome traces, `livemonctl tail --json`,
// `info --json`). Names come from users and may hold any bytes: control characters are escaped
// and invalid UTF-8 becomes U+FFFD, so the output always parses. Thread-safe.

// Appends `text` to `out` as a JSON string literal, quotes included.
void appendJsonString(std::string& out, std::string_view text);
// `text` as a JSON string literal, quotes included.
std::string jsonString(std::string_view text);

}  // namespace livemon
