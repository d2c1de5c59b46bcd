#include <livemonctl/keygen.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <ostream>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include <livemon/transport/curve.h>
#include <livemonctl/command.h>

namespace livemon::livemonctl {

namespace {

constexpr std::string_view kCommand = "keygen";

// Writes `text` to a new file at `path` with `mode`. A file already there is replaced only with
// `force`: removed first, so the new one never inherits an old file's looser permissions.
void writeNew(const std::string& path, const std::string& text, mode_t mode, bool force) {
  if (force && ::unlink(path.c_str()) != 0 && errno != ENOENT) {
    throw std::runtime_error("cannot replace " + path + ": " + std::strerror(errno));
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno));
  // The umask may only have taken permissions away; set exactly these.
  bool ok = ::fchmod(fd, mode) == 0;
  std::size_t written = 0;
  while (ok && written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) written += static_cast<std::size_t>(n);
  }
  const int error = errno;
  if (::close(fd) != 0 || !ok) {
    ::unlink(path.c_str());
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(ok ? errno : error));
  }
}

}  // namespace

int runKeygen(const KeygenOptions& options, std::ostream& out, std::ostream& err) {
  if (options.name.empty() || options.name.find('/') != std::string::npos || options.name.front() == '.' ||
      options.name.find('\0') != std::string::npos) {
    commandMessage(err, kCommand) << "NAME must be a file name without '/' that does not start with '.', got \""
                                  << options.name << "\"\n";
    return kUsageExitCode;
  }
  const std::string base = (options.dir.empty() ? std::string(".") : options.dir) + "/" + options.name;
  const std::string publicPath = base + ".key";
  const std::string secretPath = base + ".key_secret";
  if (!options.force) {
    for (const std::string& path : {publicPath, secretPath}) {
      struct stat info {};
      if (::lstat(path.c_str(), &info) == 0) {
        commandMessage(err, kCommand) << path << " exists; --force replaces it\n";
        return kFailedExitCode;
      }
    }
  }
  try {
    const transport::CurveKeyPair keys = transport::generateCurveKeyPair();
    writeNew(secretPath, transport::curveCertificateText(keys, true), 0600, options.force);
    writeNew(publicPath, transport::curveCertificateText(keys, false), 0644, options.force);
    out << "wrote " << publicPath << " (public: give it to the other side) and " << secretPath
        << " (secret: readable by you only)\n  public key: " << keys.publicKey << '\n';
    return 0;
  } catch (const std::exception& error) {
    commandMessage(err, kCommand) << error.what() << '\n';
    return kFailedExitCode;
  }
}

Command addKeygenCommand(CLI::App& app) {
  const auto options = std::make_shared<KeygenOptions>();
  CLI::App* command = app.add_subcommand(
      "keygen", "Make a CURVE key pair: NAME.key (public) and NAME.key_secret (owner-only), ZeroMQ text certificates");
  command->add_option("name", options->name, "The certificates' name")->required();
  command->add_option("--dir", options->dir, "Write into DIR (e.g. ~/.config/livemon/keys)")
      ->option_text("DIR")
      ->check(CLI::ExistingDirectory)
      ->capture_default_str();
  command->add_flag("--force", options->force, "Replace existing files");

  return {command, [options](const CommandContext& context) { return runKeygen(*options, context.out, context.err); }};
}

}  // namespace livemon::livemonctl
