#pragma once

#include <mutex>
#include <ostream>
#include <streambuf>
#include <string>

namespace livemon::transport::test {

// Thread-safe: one thread writes through the stream, any thread reads text().
// An output stream a command writes on its own thread while the test reads what it wrote so far.
class LockedStream : public std::ostream {
 public:
  LockedStream() : std::ostream(&buffer_) {}
  std::string text() const {
    std::lock_guard lock(buffer_.mutex);
    return buffer_.text;
  }

 private:
  struct Buffer : std::streambuf {
    int_type overflow(int_type c) override {
      if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
      std::lock_guard lock(mutex);
      text += traits_type::to_char_type(c);
      return c;
    }
    std::streamsize xsputn(const char* data, std::streamsize count) override {
      std::lock_guard lock(mutex);
      text.append(data, static_cast<std::size_t>(count));
      return count;
    }
    mutable std::mutex mutex;
    std::string text;
  };
  Buffer buffer_;
};

}  // namespace livemon::transport::test
