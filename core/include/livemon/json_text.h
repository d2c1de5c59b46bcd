#pragma once

#include <string>
#include <string_view>

namespace livemon {

// JSON string literals for text livemon writes as JSON (Chrome traces, `livemonctl tail --json`,
// `info --json`). Names come from users and may hold any bytes: control characters are escaped
// and invalid UTF-8 becomes U+FFFD, so the output always parses. What a terminal or a log viewer
// showing the output would act on is escaped as \uXXXX too: C1 controls (U+0080..U+009F), the
// line and paragraph separators (U+2028, U+2029) and the bidirectional embeddings, overrides and
// isolates (U+202A..U+202E, U+2066..U+2069). Thread-safe.

// Appends `text` to `out` as a JSON string literal, quotes included.
void appendJsonString(std::string& out, std::string_view text);
// `text` as a JSON string literal, quotes included.
std::string jsonString(std::string_view text);

}  // namespace livemon
