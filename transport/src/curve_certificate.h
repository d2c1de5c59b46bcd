#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

// Only transport/src (and the certificate fuzz target) include this header.
namespace livemon::transport::detail {

using CurveKey = std::array<uint8_t, 32>;

// A certificate file larger than this is refused unread: a real one is a few hundred bytes.
inline constexpr std::size_t kMaxCertificateBytes = 16 * 1024;

// Thread-safety: a plain value type. The keys of a ZeroMQ text certificate.
struct ParsedCertificate {
  CurveKey publicKey{};
  std::optional<CurveKey> secretKey;
};

// Reads a ZeroMQ text certificate (ZPL: `public-key = "<40 Z85 characters>"`, and `secret-key`
// in a secret one; comments and other entries are skipped). The text is hostile: at most
// kMaxCertificateBytes, one pass, nothing kept but the keys. Throws std::invalid_argument
// "<name>: line N: <what is wrong>" (or "<name>: <what is missing>").
ParsedCertificate parseCertificate(std::string_view text, std::string_view name);

// Z85 (ZeroMQ RFC 32) for 32-byte keys. decodeZ85Key returns nothing for text that is not 40
// valid Z85 characters.
std::optional<CurveKey> decodeZ85Key(std::string_view text) noexcept;
std::string encodeZ85Key(const CurveKey& key);

// Reads and parses the certificate at `path` (a regular file of at most kMaxCertificateBytes).
// With `needSecret`, a public certificate is refused, and the secret key must match the public
// one. Throws std::invalid_argument naming the file.
ParsedCertificate readCertificateFile(const std::string& path, bool needSecret);

}  // namespace livemon::transport::detail
