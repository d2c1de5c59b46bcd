#pragma once

#include <string>
#include <string_view>

namespace livemon::transport {

// Environment variables that give a process its CURVE settings without a change to its code
// (docs/wire-format.md, "Security"). Publishers read the first three and the last; clients
// (subscribers: the dashboard, tail, record, watch, ranks) read LIVEMON_CURVE_CLIENT and
// LIVEMON_CURVE_SERVER and the last; `livemonctl relay` also reads LIVEMON_CURVE_ALLOW_PUBLISH
// (RelayOptions::curveAllowPublish).
inline constexpr std::string_view kCurveSecretEnvironmentVariable = "LIVEMON_CURVE_SECRET";
inline constexpr std::string_view kCurveAllowEnvironmentVariable = "LIVEMON_CURVE_ALLOW";
inline constexpr std::string_view kCurveServerEnvironmentVariable = "LIVEMON_CURVE_SERVER";
inline constexpr std::string_view kCurveClientEnvironmentVariable = "LIVEMON_CURVE_CLIENT";
inline constexpr std::string_view kRequireCurveEnvironmentVariable = "LIVEMON_REQUIRE_CURVE";
inline constexpr std::string_view kCurveAllowPublishEnvironmentVariable = "LIVEMON_CURVE_ALLOW_PUBLISH";

// Thread-safety: a plain value type.
//
// CURVE encryption and authentication (ZeroMQ's CurveZMQ) for the sockets one object opens. The
// side that binds is the CURVE server: it proves itself with `certificate` and admits only the
// clients whose public certificates are in `allow`; a client that is not there is refused (and
// counted: PublisherStats::curveRefused, RelayStats::curveRefused, with the clients that come
// without CURVE or with the wrong server certificate). The side that connects is the
// CURVE client: it proves itself with `certificate` and accepts only the server whose public
// certificate is `serverCertificate`. Files are ZeroMQ text certificates as `livemonctl keygen`
// writes them (and czmq's zcert or pyzmq's zmq.auth.create_certificates).
struct CurveOptions {
  // This side's key pair: a NAME.key_secret file. Empty: no CURVE (plain TCP).
  std::string certificate;
  // Binding side: a directory of the public certificates (*.key) of the clients allowed in. Read
  // again when the directory changes (a file added, removed or renamed into place), at most 1024
  // files of at most 16 KiB each. A key removed (or replaced) loses its live TCP connections
  // within about 200 ms, each counted as a refusal; ipc:// connections are kept.
  std::string allow;
  // Connecting side: the server's public certificate (its NAME.key).
  std::string serverCertificate;
  // Binding an address other machines can reach (anything but loopback, ipc:// and inproc://)
  // without CURVE: false prints one warning per process naming the risk; true refuses it
  // (TransportError).
  bool require = false;

  bool enabled() const noexcept { return !certificate.empty(); }
};

// CurveOptions from LIVEMON_CURVE_SECRET, LIVEMON_CURVE_ALLOW, LIVEMON_CURVE_SERVER and
// LIVEMON_REQUIRE_CURVE (1: require): a publisher's or a relay's defaults.
CurveOptions publisherCurveFromEnvironment();
// CurveOptions from LIVEMON_CURVE_CLIENT, LIVEMON_CURVE_SERVER and LIVEMON_REQUIRE_CURVE: a
// subscriber's defaults.
CurveOptions clientCurveFromEnvironment();

// Thread-safety: a plain value type. A CURVE key pair in Z85 text, 40 characters each.
struct CurveKeyPair {
  std::string publicKey;
  std::string secretKey;
};

// A fresh key pair from libzmq (libsodium). Throws TransportError when libzmq has no CURVE.
CurveKeyPair generateCurveKeyPair();
// The ZeroMQ text certificate of `keys`: the public one (NAME.key), or with the secret key too
// (NAME.key_secret).
std::string curveCertificateText(const CurveKeyPair& keys, bool withSecret);
// The keys in a certificate file (the secret key empty for a public certificate). Throws
// TransportError naming the file and, for a malformed one, the line.
CurveKeyPair loadCurveCertificate(const std::string& path);

}  // namespace livemon::transport
