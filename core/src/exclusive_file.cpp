#include <livemon/detail/exclusive_file.h>

#include <fcntl.h>
#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>

namespace livemon::detail {

int createExclusive(const std::string& path, mode_t mode) noexcept {
  int fd = -1;
  do {
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

int createTemporaryBeside(const std::string& path, mode_t mode, std::string& temporary) noexcept {
  // A clash with a name someone else made is not an attack that can succeed, only a retry; after
  // this many something else is wrong.
  constexpr int kAttempts = 64;
  try {
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
      uint64_t random = 0;
      if (getrandom(&random, sizeof random, 0) != static_cast<ssize_t>(sizeof random)) {
        if (errno == EINTR) continue;
        return -1;
      }
      char suffix[32];
      std::snprintf(suffix, sizeof suffix, ".%016llx.partial", static_cast<unsigned long long>(random));
      temporary = path + suffix;
      const int fd = createExclusive(temporary, mode);
      if (fd >= 0 || errno != EEXIST) return fd;
    }
    errno = EEXIST;
  } catch (...) {
    errno = ENOMEM;
  }
  return -1;
}

}  // namespace livemon::detail
