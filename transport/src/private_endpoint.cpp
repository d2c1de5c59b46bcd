#include <livemon/transport/private_endpoint.h>

#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <livemon/transport/error.h>

namespace livemon::transport {

namespace {

// Makes `path` (mode 0700) unless it exists, then checks that it is a directory of this user that
// no one else may enter: a directory another user made first (a guessable /tmp path) is theirs.
void ensurePrivateDirectory(const std::string& path) {
  auto fail = [&](const std::string& reason) {
    throw TransportError(path, reason, "livemon: private endpoint directory " + path + ": " + reason);
  };
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) fail(std::strerror(errno));
  struct stat info {};
  if (lstat(path.c_str(), &info) != 0) fail(std::strerror(errno));
  if (!S_ISDIR(info.st_mode)) fail("is not a directory (a symlink or a file is in its place)");
  if (info.st_uid != geteuid()) fail("belongs to another user");
  if ((info.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(info.st_mode & 07777));
    fail(std::string("is open to other users (mode ") + mode + "; chmod 700 it if it is yours)");
  }
}

}  // namespace

std::string privateEndpoint(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos) {
    throw std::invalid_argument("privateEndpoint: name \"" + std::string(name) +
                                "\" must be one path component (not empty, \".\" or \"..\", no '/')");
  }
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  std::string base;
  if (runtime != nullptr && runtime[0] == '/') {
    base = runtime;
  } else {
    base = "/tmp/livemon-" + std::to_string(geteuid());
    ensurePrivateDirectory(base);
  }
  const std::string directory = base + "/livemon";
  // The history socket goes beside it with ".history" appended.
  const std::size_t longest = directory.size() + 1 + name.size() + std::string_view(".history").size();
  if (longest >= sizeof(sockaddr_un::sun_path)) {
    throw std::invalid_argument("privateEndpoint: " + directory + "/" + std::string(name) +
                                " is too long for a Unix socket path (" + std::to_string(sizeof(sockaddr_un::sun_path) - 1) +
                                " bytes at most, with \".history\")");
  }
  ensurePrivateDirectory(directory);
  return "ipc://" + directory + "/" + std::string(name);
}

}  // namespace livemon::transport
