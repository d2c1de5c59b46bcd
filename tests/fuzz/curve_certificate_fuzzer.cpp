// Fuzzes the CURVE certificate parser: what a publisher or relay reads from every file in its
// allow-list directory, which other users may be able to write. Input: the file's text.
// Properties beyond "no crash, no undefined behaviour, no leak": a refusal names the file; an
// accepted certificate's keys are 32 bytes that encode to Z85 and decode back to themselves, and
// the certificate livemon writes for them parses to the same keys.
#include <stdexcept>
#include <string>

#include <livemon/transport/curve.h>

#include "curve_certificate.h"
#include "fuzz_support.h"

namespace {

using namespace livemon::transport;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  detail::ParsedCertificate parsed;
  try {
    parsed = detail::parseCertificate(text, "fuzz.key");
  } catch (const std::invalid_argument& error) {
    LIVEMON_FUZZ_CHECK(std::string_view(error.what()).starts_with("fuzz.key: "));
    return 0;
  }
  LIVEMON_FUZZ_CHECK(size <= detail::kMaxCertificateBytes);
  const std::string publicText = detail::encodeZ85Key(parsed.publicKey);
  LIVEMON_FUZZ_CHECK(detail::decodeZ85Key(publicText) == parsed.publicKey);
  CurveKeyPair keys{publicText, parsed.secretKey ? detail::encodeZ85Key(*parsed.secretKey) : std::string()};
  const detail::ParsedCertificate again = detail::parseCertificate(curveCertificateText(keys, parsed.secretKey.has_value()), "again");
  LIVEMON_FUZZ_CHECK(again.publicKey == parsed.publicKey);
  LIVEMON_FUZZ_CHECK(again.secretKey == parsed.secretKey);
  return 0;
}
