#include <livemonctl/command.h>

#include <ostream>
#include <stdexcept>

#include <livemon/transport/error.h>

namespace livemon::livemonctl {

std::ostream& commandMessage(std::ostream& stream, std::string_view command) {
  return stream << "livemonctl " << command << ": ";
}

int runCommand(std::string_view command, std::ostream& err, const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::invalid_argument& error) {
    commandMessage(err, command) << error.what() << '\n';
    return kFailedExitCode;
  } catch (const transport::TransportError& error) {
    commandMessage(err, command) << error.what() << '\n';
    return kFailedExitCode;
  }
}

int reportUnexpected(std::string_view command, std::ostream& err, const std::exception& error) {
  commandMessage(err, command) << error.what() << '\n';
  return kFailedExitCode;
}

void StatusLine::show(const std::string& text, bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  err_ << '\r' << text << "\033[K" << std::flush;
  shown_ = true;
}

void StatusLine::finish() {
  if (shown_) err_ << '\n' << std::flush;
  shown_ = false;
}

}  // namespace livemon::livemonctl
