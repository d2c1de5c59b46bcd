#pragma once

#include <iosfwd>
#include <string>
#include <livemonctl/command_line.h>

// `livemonctl keygen NAME`: a CURVE key pair as ZeroMQ text certificates, NAME.key (public: give
// it to the other side) and NAME.key_secret (readable by its owner only).
namespace livemon::livemonctl {

// Thread-safety: a plain value type.
struct KeygenOptions {
  std::string name;       // a file name without '/', not starting with '.'
  std::string dir = ".";  // where the files go (it must exist)
  bool force = false;     // replace existing files
};

// Returns 0, kFailedExitCode (a file exists without `force`, the directory cannot be written) or
// kUsageExitCode (a bad NAME), with the reason on `err`.
int runKeygen(const KeygenOptions& options, std::ostream& out, std::ostream& err);

// Adds `keygen` and its options to `app` (command_line.h).
Command addKeygenCommand(CLI::App& app);

}  // namespace livemon::livemonctl
