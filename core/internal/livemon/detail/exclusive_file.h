#pragma once

#include <sys/types.h>

#include <string>

// Internal to livemon (see fork_hooks.h): files livemon creates where others may write too (a
// shared /tmp, a run directory), so it never writes through a link someone put there, never
// into the bytes of an existing file, and never under a name someone could guess beforehand.
namespace livemon::detail {

// Creates `path` for writing, only if nothing is there (O_CREAT | O_EXCL | O_NOFOLLOW |
// O_CLOEXEC; `mode` under the umask). Returns the descriptor, or -1 with errno set (EEXIST
// when anything is at `path`, a symbolic link included).
int createExclusive(const std::string& path, mode_t mode) noexcept;

// Creates a new file beside `path`, in its directory, under a name no one can guess
// ("<name>.<16 random hex digits>.partial"), exclusively as createExclusive() does. Returns the
// descriptor and sets `temporary` to the name, or returns -1 with errno set.
int createTemporaryBeside(const std::string& path, mode_t mode, std::string& temporary) noexcept;

}  // namespace livemon::detail
