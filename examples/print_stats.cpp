// A synthetic training loop instrumented with livemon Stats; prints each Stat window as it
// closes. Runs until Ctrl-C, or for --seconds N.
//
//   build/examples/print_stats [--seconds N] [--window-ms N]
#include <livemon/event_handler.h>
#include <livemon/stat.h>
#include <livemon/wait_counter.h>

#include <csignal>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>

namespace {

volatile std::sig_atomic_t stopRequested = 0;

void printWindow(const livemon::Event& event) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(event.timestamp.time_since_epoch()).count();
  const std::map<std::string, livemon::DataValue> sorted(event.data.begin(), event.data.end());
  std::printf("[%lld.%03lld] %s", static_cast<long long>(ms / 1000), static_cast<long long>(ms % 1000),
              event.name.c_str());
  for (const auto& [key, value] : sorted) std::printf("  %s=%s", key.c_str(), livemon::toString(value).c_str());
  std::printf("\n");
  std::fflush(stdout);
}

int usage(const char* program) {
  std::fprintf(stderr, "usage: %s [--seconds N] [--window-ms N]\n", program);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace std::chrono_literals;
  using livemon::Aggregation;
  double seconds = 0;  // 0: until Ctrl-C
  long windowMs = 1000;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf("Runs a synthetic training loop and prints each livemon Stat window as it closes.\n");
      usage(argv[0]);
      return 0;
    }
    if (i + 1 >= argc) return usage(argv[0]);
    char* end = nullptr;
    if (arg == "--seconds") {
      seconds = std::strtod(argv[++i], &end);
    } else if (arg == "--window-ms") {
      windowMs = std::strtol(argv[++i], &end, 10);
    } else {
      return usage(argv[0]);
    }
    if (end == nullptr || *end != '\0' || seconds < 0 || windowMs < 1) return usage(argv[0]);
  }
  std::signal(SIGINT, [](int) { stopRequested = 1; });
  std::signal(SIGTERM, [](int) { stopRequested = 1; });

  livemon::registerEventHandler(printWindow);
  const std::chrono::milliseconds window(windowMs);
  livemon::Stat loss("loss", {Aggregation::Mean, Aggregation::Min, Aggregation::Max}, window);
  livemon::Stat stepTime("step_time_ms", {Aggregation::Mean, Aggregation::P50, Aggregation::P90, Aggregation::P99},
                         window);
  livemon::Stat throughput("samples_per_s", {Aggregation::Mean}, window);
  livemon::WaitCounter dataWait("data_wait");

  std::mt19937_64 rng(std::random_device{}());
  std::normal_distribution<double> noise(0, 1);
  std::printf("print_stats: training a pretend model; one line per Stat window every %ld ms (Ctrl-C stops)\n",
              windowMs);
  std::fflush(stdout);
  const auto started = std::chrono::steady_clock::now();
  for (long step = 0; !stopRequested; ++step) {
    const auto stepStart = std::chrono::steady_clock::now();
    if (seconds > 0 && stepStart - started > std::chrono::duration<double>(seconds)) break;
    {
      auto waiting = dataWait.start();
      std::this_thread::sleep_for(std::chrono::microseconds(200 + static_cast<int>(std::abs(noise(rng)) * 100)));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(1500 + static_cast<int>(std::abs(noise(rng)) * 300)));
    loss.add(2.5 * std::exp(-static_cast<double>(step) / 3000.0) + 0.1 + 0.05 * noise(rng));
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - stepStart).count();
    stepTime.add(ms);
    throughput.add(64 * 1000.0 / ms);  // a batch of 64 samples
  }
  std::printf("print_stats: stopping\n");
  return 0;
}
