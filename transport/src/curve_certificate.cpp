#include "curve_certificate.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <zmq.h>

#include <livemon/transport/curve.h>
#include <livemon/transport/error.h>

namespace livemon::transport::detail {

namespace {

// A 32-byte key in Z85 (ZeroMQ RFC 32).
constexpr std::size_t kZ85KeyChars = 40;

std::string_view trim(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

[[noreturn]] void bad(std::string_view name, std::size_t line, const std::string& what) {
  throw std::invalid_argument(std::string(name) + ": line " + std::to_string(line) + ": " + what);
}

}  // namespace

std::optional<CurveKey> decodeZ85Key(std::string_view text) noexcept {
  // libzmq reads up to a NUL: one inside would cut the text short.
  if (text.size() != kZ85KeyChars || text.find('\0') != std::string_view::npos) return std::nullopt;
  char terminated[kZ85KeyChars + 1];
  std::memcpy(terminated, text.data(), kZ85KeyChars);
  terminated[kZ85KeyChars] = '\0';
  CurveKey key{};
  // Refuses characters outside the alphabet and groups of five that reach beyond four bytes.
  if (zmq_z85_decode(key.data(), terminated) == nullptr) return std::nullopt;
  return key;
}

std::string encodeZ85Key(const CurveKey& key) {
  char text[kZ85KeyChars + 1];
  zmq_z85_encode(text, key.data(), key.size());  // cannot fail: the size is a multiple of 4
  return std::string(text, kZ85KeyChars);
}

ParsedCertificate parseCertificate(std::string_view text, std::string_view name) {
  if (text.size() > kMaxCertificateBytes) {
    throw std::invalid_argument(std::string(name) + ": larger than " + std::to_string(kMaxCertificateBytes) +
                                " bytes: not a certificate");
  }
  std::optional<CurveKey> publicKey;
  std::optional<CurveKey> secretKey;
  std::size_t lineNumber = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = trim(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++lineNumber;
    if (line.empty() || line.front() == '#') continue;
    if (line.find('\0') != std::string_view::npos) bad(name, lineNumber, "a NUL byte: not a text certificate");
    std::optional<CurveKey>* target = nullptr;
    std::string_view rest;
    for (auto [keyName, slot] : {std::pair{std::string_view("public-key"), &publicKey},
                                 std::pair{std::string_view("secret-key"), &secretKey}}) {
      if (line.starts_with(keyName)) {
        rest = trim(line.substr(keyName.size()));
        if (!rest.empty() && rest.front() == '=') {
          target = slot;
          rest = trim(rest.substr(1));
        }
      }
    }
    if (target == nullptr) continue;  // another entry (metadata, a section name): not ours to judge
    if (rest.size() >= 2 && (rest.front() == '"' || rest.front() == '\'')) {
      if (rest.back() != rest.front()) bad(name, lineNumber, "the key's closing quote is missing");
      rest = rest.substr(1, rest.size() - 2);
    }
    if (target->has_value()) bad(name, lineNumber, "the key appears twice");
    *target = decodeZ85Key(rest);
    if (!target->has_value()) bad(name, lineNumber, "the key is not 40 Z85 characters");
  }
  if (!publicKey) throw std::invalid_argument(std::string(name) + ": no public-key: not a ZeroMQ certificate");
  return ParsedCertificate{*publicKey, secretKey};
}

ParsedCertificate readCertificateFile(const std::string& path, bool needSecret) {
  const auto fail = [&](const std::string& why) {
    throw std::invalid_argument("CURVE certificate " + path + ": " + why);
  };
  // Non-blocking: a FIFO put in the certificate's place must not hang the caller.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail(std::strerror(errno));
  std::string text;
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    fail("not a regular file");
  }
  text.resize(kMaxCertificateBytes + 1);
  std::size_t size = 0;
  while (size < text.size()) {
    const ssize_t got = ::read(fd, text.data() + size, text.size() - size);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    size += static_cast<std::size_t>(got);
  }
  ::close(fd);
  text.resize(size);
  ParsedCertificate parsed = parseCertificate(text, path);
  if (needSecret) {
    if (!parsed.secretKey) fail("no secret-key: give the NAME.key_secret file, not NAME.key");
    char derived[41] = {};
    const std::string secret = encodeZ85Key(*parsed.secretKey);
    if (zmq_curve_public(derived, secret.c_str()) != 0) fail(std::string("libzmq: ") + zmq_strerror(errno));
    if (encodeZ85Key(parsed.publicKey) != derived) fail("the public-key does not belong to the secret-key");
  }
  return parsed;
}

}  // namespace livemon::transport::detail

namespace livemon::transport {

namespace {

std::string environment(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  return value == nullptr ? std::string() : std::string(value);
}

bool requireFromEnvironment() {
  const std::string value = environment(kRequireCurveEnvironmentVariable);
  return !value.empty() && value != "0";
}

}  // namespace

CurveOptions publisherCurveFromEnvironment() {
  CurveOptions options;
  options.certificate = environment(kCurveSecretEnvironmentVariable);
  options.allow = environment(kCurveAllowEnvironmentVariable);
  options.serverCertificate = environment(kCurveServerEnvironmentVariable);
  options.require = requireFromEnvironment();
  return options;
}

CurveOptions clientCurveFromEnvironment() {
  CurveOptions options;
  options.certificate = environment(kCurveClientEnvironmentVariable);
  options.serverCertificate = environment(kCurveServerEnvironmentVariable);
  options.require = requireFromEnvironment();
  return options;
}

CurveKeyPair generateCurveKeyPair() {
  char publicKey[41] = {};
  char secretKey[41] = {};
  if (zmq_curve_keypair(publicKey, secretKey) != 0) {
    const int error = errno;
    throw TransportError("", zmq_strerror(error),
                         std::string("livemon transport: cannot make a CURVE key pair: ") + zmq_strerror(error));
  }
  return CurveKeyPair{publicKey, secretKey};
}

std::string curveCertificateText(const CurveKeyPair& keys, bool withSecret) {
  // The sections and keys of ZeroMQ's text certificate format, which pyzmq's
  // zmq.auth.load_certificate reads; the comment lines are livemon's own.
  std::string text = "# livemon CURVE certificate, made by livemonctl keygen\n";
  text += withSecret ? "# SECRET: it proves this side's identity. Keep it readable by its owner only; never send it.\n"
                     : "# PUBLIC: give it to the other side (a server's allow list, or a client's --curve-server).\n";
  text += "\nmetadata\ncurve\n    public-key = \"" + keys.publicKey + "\"\n";
  if (withSecret) text += "    secret-key = \"" + keys.secretKey + "\"\n";
  return text;
}

CurveKeyPair loadCurveCertificate(const std::string& path) {
  try {
    const detail::ParsedCertificate parsed = detail::readCertificateFile(path, false);
    CurveKeyPair keys;
    keys.publicKey = detail::encodeZ85Key(parsed.publicKey);
    if (parsed.secretKey) keys.secretKey = detail::encodeZ85Key(*parsed.secretKey);
    return keys;
  } catch (const std::invalid_argument& error) {
    throw TransportError(path, error.what(), error.what());
  }
}

}  // namespace livemon::transport
