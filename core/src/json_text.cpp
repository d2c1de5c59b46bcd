#include <livemon/json_text.h>

#include <cstdint>
#include <cstdio>

#include <livemon/detail/utf8.h>

namespace livemon {
namespace {

// The code point of a valid UTF-8 sequence of `length` bytes at text[i] that a terminal or a log
// viewer acts on: C1 controls (U+0080..U+009F), the line and paragraph separators (U+2028,
// U+2029) and the bidirectional embeddings, overrides (U+202A..U+202E) and isolates
// (U+2066..U+2069), which show the text around them on other lines or in another order. 0 for
// any other.
uint32_t actedOn(std::string_view text, std::size_t i, std::size_t length) noexcept {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  if (length == 2 && at(0) == 0xc2 && at(1) <= 0x9f) return at(1);
  if (length == 3 && at(0) == 0xe2) {
    const uint32_t codePoint = 0x2000 | ((at(1) & 0x3fu) << 6) | (at(2) & 0x3fu);
    if ((codePoint >= 0x2028 && codePoint <= 0x202e) || (codePoint >= 0x2066 && codePoint <= 0x2069)) return codePoint;
  }
  return 0;
}

void appendEscape(std::string& out, uint32_t codePoint) {
  char escape[8];
  std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(codePoint));
  out += escape;
}

}  // namespace

void appendJsonString(std::string& out, std::string_view text) {
  out.reserve(out.size() + text.size() + 2);
  out += '"';
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          if (c < 0x20 || c == 0x7f) {
            appendEscape(out, c);
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    if (const std::size_t length = detail::utf8SequenceLength(text, i); length != 0) {
      if (const uint32_t codePoint = actedOn(text, i, length); codePoint != 0) {
        appendEscape(out, codePoint);
      } else {
        out.append(text.substr(i, length));
      }
      i += length;
    } else {
      out += "\xef\xbf\xbd";  // U+FFFD for the byte that starts no valid sequence
      ++i;
    }
  }
  out += '"';
}

std::string jsonString(std::string_view text) {
  std::string out;
  appendJsonString(out, text);
  return out;
}

}  // namespace livemon
