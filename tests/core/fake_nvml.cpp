// A stand-in for libnvidia-ml.so.1 that SystemStatsSampler loads in tests: two GPUs with fixed
// readings, the second one's temperature unreadable. FAKE_NVML_INIT_FAILS=1 makes nvmlInit_v2
// fail, as on a host whose driver is not loaded.
#include <cstdlib>

namespace {
struct FakeDevice {
  unsigned int index;
};
FakeDevice g_devices[2] = {{0}, {1}};
constexpr int kSuccess = 0;
constexpr int kNotSupported = 3;  // NVML_ERROR_NOT_SUPPORTED
}  // namespace

extern "C" {

struct FakeUtilization {
  unsigned int gpu;
  unsigned int memory;
};
struct FakeMemory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

int nvmlInit_v2() {
  const char* fails = std::getenv("FAKE_NVML_INIT_FAILS");
  return fails != nullptr && fails[0] == '1' ? 1 : kSuccess;
}
int nvmlShutdown() { return kSuccess; }
int nvmlDeviceGetCount_v2(unsigned int* count) {
  *count = 2;
  return kSuccess;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** device) {
  if (index >= 2) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *device = &g_devices[index];
  return kSuccess;
}
int nvmlDeviceGetUtilizationRates(void* device, FakeUtilization* utilization) {
  utilization->gpu = 40 + 50 * static_cast<FakeDevice*>(device)->index;  // 40 %, 90 %
  utilization->memory = 10;
  return kSuccess;
}
int nvmlDeviceGetMemoryInfo(void* device, FakeMemory* memory) {
  memory->total = 80ull << 30;
  memory->used = (static_cast<FakeDevice*>(device)->index + 1) * (1ull << 30);  // 1 GiB, 2 GiB
  memory->free = memory->total - memory->used;
  return kSuccess;
}
int nvmlDeviceGetTemperature(void* device, int sensor, unsigned int* celsius) {
  if (sensor != 0 || static_cast<FakeDevice*>(device)->index == 1) return kNotSupported;
  *celsius = 61;
  return kSuccess;
}
int nvmlDeviceGetPowerUsage(void* device, unsigned int* milliwatts) {
  *milliwatts = 250500 + 1000 * static_cast<FakeDevice*>(device)->index;  // 250.5 W, 251.5 W
  return kSuccess;
}

}  // extern "C"
