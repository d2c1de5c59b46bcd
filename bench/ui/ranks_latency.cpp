// ranks_latency: how soon after a window's end `livemonctl ranks --json` has printed the window's
// table, for the ranks that publish on ENDPOINT... (e.g. a relay fed by `livemonctl demo --ranks
// 1024 --straggler 7 --connect ...`). Runs runRanks, the command's own code, for --seconds (30)
// with an output stream that notes when each window's output is flushed; a window k ends at
// start + k × --window, where start is when the command said it was scoring (just before its
// clock starts, so a latency here is at most a few microseconds over the true one). Prints each
// window's latency, ranks and bytes, then the median, p99 and max.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include <livemonctl/ranks.h>

namespace {

using Clock = std::chrono::steady_clock;

// Keeps what is written, and notes the time of each flush that carried something.
class TimedBuffer : public std::streambuf {
 public:
  struct Flush {
    Clock::time_point at;
    std::string text;
  };
  std::vector<Flush> flushes;

 protected:
  int overflow(int c) override {
    if (c != traits_type::eof()) pending_ += static_cast<char>(c);
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    pending_.append(s, static_cast<std::size_t>(n));
    return n;
  }
  int sync() override {
    if (!pending_.empty()) flushes.push_back({Clock::now(), std::move(pending_)});
    pending_.clear();
    return 0;
  }

 private:
  std::string pending_;
};

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  livemon::livemonctl::RanksOptions options;
  options.endpoints.clear();
  options.json = true;
  double seconds = 30.0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--seconds" || arg == "--window") && i + 1 < argc) {
      const double value = std::atof(argv[++i]);
      if (arg == "--seconds") seconds = value;
      else options.window = std::chrono::milliseconds(static_cast<int64_t>(value * 1000));
    } else if (arg.rfind("--", 0) == 0) {
      std::fprintf(stderr, "usage: %s [--seconds S] [--window S] ENDPOINT...\n", argv[0]);
      return 2;
    } else {
      options.endpoints.push_back(arg);
    }
  }
  if (options.endpoints.empty() || !(seconds >= 2) || options.window < std::chrono::milliseconds(10)) {
    std::fprintf(stderr, "usage: %s [--seconds S (>= 2)] [--window S (>= 0.01)] ENDPOINT...\n", argv[0]);
    return 2;
  }
  options.duration = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  TimedBuffer outBuffer;
  TimedBuffer errBuffer;
  std::ostream out(&outBuffer);
  std::ostream err(&errBuffer);
  std::atomic<bool> stop{false};
  const int code = livemon::livemonctl::runRanks(options, stop, out, err);
  for (const auto& flush : errBuffer.flushes) std::fputs(flush.text.c_str(), stderr);
  if (code != 0 || errBuffer.flushes.empty()) return code != 0 ? code : 1;
  const Clock::time_point start = errBuffer.flushes.front().at;  // "scoring the ranks ..."
  const double window = static_cast<double>(options.window.count());
  std::vector<double> latencies;
  std::printf("%6s %10s %8s %8s %9s\n", "window", "ends (ms)", "late ms", "ranks", "bytes");
  for (const auto& flush : outBuffer.flushes) {
    const double since = std::chrono::duration<double, std::milli>(flush.at - start).count();
    const double k = std::floor(since / window);
    const double late = since - k * window;
    latencies.push_back(late);
    std::printf("%6.0f %10.0f %8.2f %8zu %9zu\n", k, k * window, late, count(flush.text, "\"rank\":"), flush.text.size());
  }
  if (latencies.empty()) {
    std::printf("no window had ranks\n");
    return 1;
  }
  std::sort(latencies.begin(), latencies.end());
  const auto at = [&](double p) {
    return latencies[std::min(latencies.size() - 1, static_cast<std::size_t>(std::ceil(p / 100.0 * latencies.size())) - 1)];
  };
  std::printf("%zu windows printed: latency after the window's end median %.2f ms, p99 %.2f ms, max %.2f ms\n", latencies.size(), at(50),
              at(99), latencies.back());
  return 0;
}
