#pragma once

#include <cstddef>
#include <string_view>

// Internal to livemon (see fork_hooks.h): the one UTF-8 check, for text livemon writes where a
// reader refuses invalid UTF-8 (JSON, Prometheus label values).
namespace livemon::detail {

// The length of the UTF-8 sequence starting at text[i]: 1 for ASCII, 2 to 4 for a valid
// multi-byte sequence, 0 when the bytes there are not one (a stray continuation byte, a sequence
// cut short, overlong forms, UTF-16 surrogates, code points beyond U+10FFFF). i < text.size().
inline std::size_t utf8SequenceLength(std::string_view text, std::size_t i) noexcept {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
  }
  // Overlong 3- and 4-byte forms, surrogates and code points beyond U+10FFFF.
  if (lead == 0xe0 && byte(i + 1) < 0xa0) return 0;
  if (lead == 0xed && byte(i + 1) >= 0xa0) return 0;
  if (lead == 0xf0 && byte(i + 1) < 0x90) return 0;
  if (lead == 0xf4 && byte(i + 1) >= 0x90) return 0;
  return length;
}

}  // namespace livemon::detail
