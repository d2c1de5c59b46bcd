#include "system_probe.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <type_traits>

namespace livemon::detail {

namespace {

// The next space-separated token of `text` from `pos` on; empty at the end.
std::string_view nextToken(std::string_view text, std::size_t& pos) {
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n' || text[pos] == '\t')) ++pos;
  const std::size_t start = pos;
  while (pos < text.size() && text[pos] != ' ' && text[pos] != '\n' && text[pos] != '\t') ++pos;
  return text.substr(start, pos - start);
}

std::optional<uint64_t> parseUnsigned(std::string_view token) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (token.empty() || error != std::errc() || end != token.data() + token.size()) return std::nullopt;
  return value;
}

// "<name>:   <number> kB" at the start of a line of /proc/meminfo, in bytes.
std::optional<uint64_t> meminfoBytes(std::string_view text, std::string_view name) {
  std::size_t at = 0;
  while (true) {
    at = text.find(name, at);
    if (at == std::string_view::npos) return std::nullopt;
    if ((at == 0 || text[at - 1] == '\n') && at + name.size() < text.size() && text[at + name.size()] == ':') break;
    at += name.size();
  }
  std::size_t pos = at + name.size() + 1;
  const auto kib = parseUnsigned(nextToken(text, pos));
  if (!kib || nextToken(text, pos) != "kB" || *kib > UINT64_MAX / 1024) return std::nullopt;
  return *kib * 1024;
}

// NVML's C API, as far as livemon uses it (nvml.h of the CUDA toolkit documents it).
using NvmlReturn = int;  // nvmlReturn_t; NVML_SUCCESS is 0
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kNvmlTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU
struct NvmlUtilization {                // nvmlUtilization_t
  unsigned int gpu;
  unsigned int memory;
};
struct NvmlMemory {  // nvmlMemory_t
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
using NvmlDevice = void*;  // nvmlDevice_t, an opaque pointer

}  // namespace

std::optional<std::string> readSmallFile(const std::string& path, std::size_t maxBytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  // Read in pieces rather than into a buffer of maxBytes: the files are small and read often.
  std::string text;
  char piece[4096];
  bool failed = false;
  while (true) {
    const ssize_t got = ::read(fd, piece, sizeof(piece));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 || text.size() + static_cast<std::size_t>(got) > maxBytes) failed = true;
    if (got <= 0 || failed) break;
    text.append(piece, static_cast<std::size_t>(got));
  }
  ::close(fd);
  if (failed) return std::nullopt;
  return text;
}

std::optional<uint64_t> parseProcessCpuTicks(std::string_view text) {
  // The command name (field 2) is in parentheses and may itself hold spaces and parentheses.
  const std::size_t close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::size_t pos = close + 1;
  // Fields 3 (state) to 13 come first.
  for (int field = 3; field <= 13; ++field) {
    if (nextToken(text, pos).empty()) return std::nullopt;
  }
  const auto user = parseUnsigned(nextToken(text, pos));
  const auto system = parseUnsigned(nextToken(text, pos));
  if (!user || !system || *user > UINT64_MAX - *system) return std::nullopt;
  return *user + *system;
}

std::optional<uint64_t> parseResidentPages(std::string_view text) {
  std::size_t pos = 0;
  if (!parseUnsigned(nextToken(text, pos))) return std::nullopt;
  return parseUnsigned(nextToken(text, pos));
}

std::optional<uint64_t> parseHostMemoryUsedBytes(std::string_view text) {
  const auto total = meminfoBytes(text, "MemTotal");
  const auto available = meminfoBytes(text, "MemAvailable");
  if (!total || !available || *available > *total) return std::nullopt;
  return *total - *available;
}

struct NvmlGpus::Api {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  NvmlReturn (*deviceCount)(unsigned int*) = nullptr;
  NvmlReturn (*deviceByIndex)(unsigned int, NvmlDevice*) = nullptr;
  NvmlReturn (*utilization)(NvmlDevice, NvmlUtilization*) = nullptr;
  NvmlReturn (*memory)(NvmlDevice, NvmlMemory*) = nullptr;
  NvmlReturn (*temperature)(NvmlDevice, int, unsigned int*) = nullptr;
  NvmlReturn (*power)(NvmlDevice, unsigned int*) = nullptr;  // milliwatts
};

NvmlGpus::NvmlGpus(const std::string& library) : api_(std::make_unique<Api>()) {
  if (library.empty()) {
    status_ = "NVML off";
    return;
  }
  library_ = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) {
    const char* why = ::dlerror();
    status_ = "NVML not loaded: " + std::string(why != nullptr ? why : library);
    return;
  }
  bool complete = true;
  auto resolve = [&](auto& function, const char* name) {
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(::dlsym(library_, name));
    if (function == nullptr && complete) {
      complete = false;
      status_ = "NVML not used: " + library + " lacks " + name;
    }
  };
  resolve(api_->init, "nvmlInit_v2");
  resolve(api_->shutdown, "nvmlShutdown");
  resolve(api_->deviceCount, "nvmlDeviceGetCount_v2");
  resolve(api_->deviceByIndex, "nvmlDeviceGetHandleByIndex_v2");
  resolve(api_->utilization, "nvmlDeviceGetUtilizationRates");
  resolve(api_->memory, "nvmlDeviceGetMemoryInfo");
  resolve(api_->temperature, "nvmlDeviceGetTemperature");
  resolve(api_->power, "nvmlDeviceGetPowerUsage");
  if (!complete) return;
  if (const NvmlReturn result = api_->init(); result != kNvmlSuccess) {
    status_ = "NVML not used: nvmlInit_v2 returned " + std::to_string(result);
    return;
  }
  initialized_ = true;
  unsigned int count = 0;
  if (const NvmlReturn result = api_->deviceCount(&count); result != kNvmlSuccess) {
    status_ = "NVML not used: nvmlDeviceGetCount_v2 returned " + std::to_string(result);
    return;
  }
  // Devices are numbered by NVML's index, so one that cannot be opened ends the list rather than
  // shifting the numbers of those after it.
  for (unsigned int i = 0; i < count && i < kMaxDevices; ++i) {
    NvmlDevice device = nullptr;
    if (api_->deviceByIndex(i, &device) != kNvmlSuccess) break;
    devices_.push_back(device);
  }
  status_ = "NVML: " + std::to_string(devices_.size()) + (devices_.size() == 1 ? " GPU" : " GPUs");
}

NvmlGpus::~NvmlGpus() {
  if (initialized_) api_->shutdown();
  if (library_ != nullptr) ::dlclose(library_);
}

GpuReading NvmlGpus::read(std::size_t index) const {
  GpuReading reading;
  if (index >= devices_.size()) return reading;
  NvmlDevice device = devices_[index];
  if (NvmlUtilization utilization{}; api_->utilization(device, &utilization) == kNvmlSuccess && utilization.gpu <= 100) {
    reading.utilPercent = utilization.gpu;
  }
  if (NvmlMemory memory{}; api_->memory(device, &memory) == kNvmlSuccess) {
    reading.memoryUsedBytes = static_cast<double>(memory.used);
  }
  if (unsigned int celsius = 0; api_->temperature(device, kNvmlTemperatureGpu, &celsius) == kNvmlSuccess) {
    reading.temperatureC = celsius;
  }
  if (unsigned int milliwatts = 0; api_->power(device, &milliwatts) == kNvmlSuccess) {
    reading.powerWatts = milliwatts / 1000.0;
  }
  return reading;
}

}  // namespace livemon::detail
