#pragma once

#include <string>
#include <string_view>

namespace livemon::transport {

// An ipc:// endpoint that only this user can reach, for shared machines where loopback TCP lets
// every local user read, inject into or take a port (docs/security.md, "Shared machines"):
// "ipc://<dir>/<name>", where <dir> is $XDG_RUNTIME_DIR/livemon, or /tmp/livemon-<uid>/livemon
// when XDG_RUNTIME_DIR is unset or not an absolute path. The directories it makes are mode 0700.
// Bind a Publisher there and point tail, the dashboard or a relay at the same string.
//
// Throws std::invalid_argument for a name that is empty, ".", "..", holds '/' or a NUL, or makes
// a path too long for a Unix socket; TransportError naming the directory when it cannot be made,
// or when it is not a plain directory of this user's closed to everyone else (a symlink, another
// user's, or open to others: someone may be reading or taking it). Thread-safe.
std::string privateEndpoint(std::string_view name);

}  // namespace livemon::transport
