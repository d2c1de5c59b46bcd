#pragma once

// A recording's file as its reader sees it (recording_reader.cpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include <livemon/transport/recording.h>

#include "mcap_format.h"

namespace livemon::transport::mcap {

// Record headers are read through a cache of this many bytes, so walking small records costs no
// system call each.
constexpr std::size_t kBlockBytes = 64 * 1024;

// Not thread-safe: one owner at a time; one reader's.
//
// The recording's bytes, read with pread(2) into bounded buffers: a file that shrinks while it is
// read gives an error at the first byte that is gone (a mapping would raise SIGBUS).
class File {
 public:
  File() = default;
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  // Throws RecordingError naming `path`. O_NONBLOCK: a FIFO is refused, not waited on (it means
  // nothing to a regular file).
  void open(const std::string& path, const RecordingFileCheck& check) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | (check.followSymlinks ? 0 : O_NOFOLLOW));
    if (fd_ < 0) throw RecordingError(path, std::nullopt, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0) throw RecordingError(path, std::nullopt, std::string("cannot stat: ") + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) throw RecordingError(path, std::nullopt, "not an MCAP recording: not a regular file");
    if (check.identity && *check.identity != std::pair<uint64_t, uint64_t>(st.st_dev, st.st_ino)) {
      throw RecordingError(path, std::nullopt, "not the file expected: another one took its name");
    }
    size_ = static_cast<uint64_t>(st.st_size);
  }

  // The size when the file was opened.
  uint64_t size() const noexcept { return size_; }

  // Reads exactly `n` bytes at `offset` into `out`. Throws mcap::ParseError at the first byte
  // that cannot be read.
  void read(uint64_t offset, std::size_t n, std::string& out, RecordingReadStats& stats) {
    if (readSome(offset, n, out, stats) < n) gone(offset + out.size());
  }

  // `n` (at most kBlockBytes) bytes at `offset`, through the block cache; valid until the next
  // call. Throws mcap::ParseError like read().
  std::string_view view(uint64_t offset, std::size_t n, RecordingReadStats& stats) {
    if (offset < blockStart_ || offset - blockStart_ > block_.size() || block_.size() - (offset - blockStart_) < n) {
      blockStart_ = offset;
      const uint64_t want = std::max<uint64_t>(n, std::min<uint64_t>(kBlockBytes, size_ > offset ? size_ - offset : 0));
      if (readSome(offset, static_cast<std::size_t>(want), block_, stats) < n) gone(offset + block_.size());
    }
    return std::string_view(block_).substr(static_cast<std::size_t>(offset - blockStart_), n);
  }

 private:
  std::size_t readSome(uint64_t offset, std::size_t n, std::string& out, RecordingReadStats& stats) {
    out.resize(n);
    std::size_t done = 0;
    while (done < n) {
      const ssize_t got = ::pread(fd_, out.data() + done, n - done, static_cast<off_t>(offset + done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        const int error = errno;
        out.resize(done);
        throw mcap::ParseError{offset + done, std::string("cannot read: ") + std::strerror(error)};
      }
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
    }
    out.resize(done);
    stats.bytesRead += done;
    return done;
  }

  [[noreturn]] void gone(uint64_t at) const {
    struct stat st {};
    const bool known = ::fstat(fd_, &st) == 0;
    // Bytes cached before the cut may have been read past it: name where the file ends now.
    if (known && st.st_size >= 0 && static_cast<uint64_t>(st.st_size) < at) at = static_cast<uint64_t>(st.st_size);
    throw mcap::ParseError{at, "the file ends here" +
                                   (known ? " (it has " + std::to_string(st.st_size) + " bytes now, " +
                                                std::to_string(size_) + " when it was opened)"
                                          : std::string()) +
                                   ": it was truncated while being read"};
  }

  int fd_ = -1;
  uint64_t size_ = 0;
  std::string block_;
  uint64_t blockStart_ = 0;
};

}  // namespace livemon::transport::mcap
