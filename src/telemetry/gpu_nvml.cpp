// NVML through dlopen: the few entry points we need, declared here with the ABI of
// nvml.h (stable since CUDA 5), so neither the header nor the library is needed to build.
#include <dlfcn.h>

#include <array>
#include <utility>

#include "inferscope/telemetry/gpu.h"

namespace inferscope::telemetry {
namespace {

using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr int kClockSm = 1;   // NVML_CLOCK_SM
constexpr int kClockMem = 2;  // NVML_CLOCK_MEM
constexpr int kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU
struct NvmlUtilization {
  unsigned int gpu;
  unsigned int memory;
};
struct NvmlMemory {
  unsigned long long total, free, used;
};

struct NvmlApi {
  nvmlReturn_t (*init)();
  nvmlReturn_t (*shutdown)();
  const char* (*error_string)(nvmlReturn_t);
  nvmlReturn_t (*device_count)(unsigned int*);
  nvmlReturn_t (*handle_by_index)(unsigned int, nvmlDevice_t*);
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned int);
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned int);
  nvmlReturn_t (*utilization)(nvmlDevice_t, NvmlUtilization*);
  nvmlReturn_t (*memory)(nvmlDevice_t, NvmlMemory*);
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned int*);
  nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned int*);
  nvmlReturn_t (*app_clock)(nvmlDevice_t, int, unsigned int*);
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned int*);
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned int*);
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned int*);
  nvmlReturn_t (*driver_version)(char*, unsigned int);
};

template <typename F>
bool load(void* lib, const char* symbol, F& fn, std::string* missing) {
  fn = reinterpret_cast<F>(dlsym(lib, symbol));
  if (!fn && missing->empty()) *missing = symbol;
  return fn != nullptr;
}

std::optional<double> read_uint(nvmlReturn_t rc, unsigned int v, double scale = 1.0) {
  if (rc != kNvmlSuccess) return std::nullopt;
  return static_cast<double>(v) * scale;
}

class NvmlProbe final : public GpuProbe {
 public:
  // devices: (NVML index, handle) for every device whose handle could be had.
  NvmlProbe(void* lib, NvmlApi api, std::vector<std::pair<unsigned, nvmlDevice_t>> devices)
      : lib_(lib), api_(api), devices_(std::move(devices)) {}
  ~NvmlProbe() override {
    api_.shutdown();
    dlclose(lib_);
  }
  std::string_view backend() const override { return "nvml"; }
  std::string driver_version() const override {
    std::array<char, 96> buf{};
    if (api_.driver_version(buf.data(), static_cast<unsigned int>(buf.size())) != kNvmlSuccess) return {};
    return buf.data();
  }

  std::vector<GpuInfo> info() override {
    std::vector<GpuInfo> out;
    for (const auto& [index, d] : devices_) {
      GpuInfo g;
      g.index = index;
      std::array<char, 96> buf{};
      if (api_.name(d, buf.data(), static_cast<unsigned int>(buf.size())) == kNvmlSuccess) g.name = buf.data();
      buf.fill(0);
      if (api_.uuid(d, buf.data(), static_cast<unsigned int>(buf.size())) == kNvmlSuccess) g.uuid = buf.data();
      NvmlMemory mem{};
      if (api_.memory(d, &mem) == kNvmlSuccess) g.mem_total_bytes = static_cast<double>(mem.total);
      unsigned int v = 0;
      g.sm_clock_max_mhz = read_uint(api_.max_clock(d, kClockSm, &v), v);
      g.mem_clock_max_mhz = read_uint(api_.max_clock(d, kClockMem, &v), v);
      g.app_sm_clock_mhz = read_uint(api_.app_clock(d, kClockSm, &v), v);
      g.app_mem_clock_mhz = read_uint(api_.app_clock(d, kClockMem, &v), v);
      g.power_limit_w = read_uint(api_.power_limit(d, &v), v, 1e-3);
      out.push_back(std::move(g));
    }
    return out;
  }

  std::vector<GpuSample> sample() override {
    std::vector<GpuSample> out;
    for (const auto& [index, d] : devices_) {
      GpuSample s;
      s.index = index;
      NvmlUtilization u{};
      if (api_.utilization(d, &u) == kNvmlSuccess) {
        s.util_pct = u.gpu;
        s.mem_util_pct = u.memory;
      }
      NvmlMemory mem{};
      if (api_.memory(d, &mem) == kNvmlSuccess) {
        s.mem_used_bytes = static_cast<double>(mem.used);
        s.mem_total_bytes = static_cast<double>(mem.total);
      }
      unsigned int v = 0;
      s.sm_clock_mhz = read_uint(api_.clock(d, kClockSm, &v), v);
      s.mem_clock_mhz = read_uint(api_.clock(d, kClockMem, &v), v);
      s.power_w = read_uint(api_.power(d, &v), v, 1e-3);
      s.power_limit_w = read_uint(api_.power_limit(d, &v), v, 1e-3);
      s.temperature_c = read_uint(api_.temperature(d, kTemperatureGpu, &v), v);
      out.push_back(s);
    }
    return out;
  }

 private:
  void* lib_;
  NvmlApi api_;
  std::vector<std::pair<unsigned, nvmlDevice_t>> devices_;
};

}  // namespace

std::unique_ptr<GpuProbe> open_nvml(std::string* why, const char* library) {
  std::string dummy;
  if (!why) why = &dummy;
  void* lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    *why = std::string("NVML not loaded (") + (e ? e : library) + ")";
    return nullptr;
  }
  NvmlApi api{};
  std::string missing;
  bool ok = load(lib, "nvmlInit_v2", api.init, &missing);
  ok &= load(lib, "nvmlShutdown", api.shutdown, &missing);
  ok &= load(lib, "nvmlErrorString", api.error_string, &missing);
  ok &= load(lib, "nvmlDeviceGetCount_v2", api.device_count, &missing);
  ok &= load(lib, "nvmlDeviceGetHandleByIndex_v2", api.handle_by_index, &missing);
  ok &= load(lib, "nvmlDeviceGetName", api.name, &missing);
  ok &= load(lib, "nvmlDeviceGetUUID", api.uuid, &missing);
  ok &= load(lib, "nvmlDeviceGetUtilizationRates", api.utilization, &missing);
  ok &= load(lib, "nvmlDeviceGetMemoryInfo", api.memory, &missing);
  ok &= load(lib, "nvmlDeviceGetClockInfo", api.clock, &missing);
  ok &= load(lib, "nvmlDeviceGetMaxClockInfo", api.max_clock, &missing);
  ok &= load(lib, "nvmlDeviceGetApplicationsClock", api.app_clock, &missing);
  ok &= load(lib, "nvmlDeviceGetPowerUsage", api.power, &missing);
  ok &= load(lib, "nvmlDeviceGetEnforcedPowerLimit", api.power_limit, &missing);
  ok &= load(lib, "nvmlDeviceGetTemperature", api.temperature, &missing);
  ok &= load(lib, "nvmlSystemGetDriverVersion", api.driver_version, &missing);
  if (!ok) {
    *why = "NVML library lacks " + missing;
    dlclose(lib);
    return nullptr;
  }
  if (const nvmlReturn_t rc = api.init(); rc != kNvmlSuccess) {
    *why = std::string("NVML init failed (") + api.error_string(rc) + ")";
    dlclose(lib);
    return nullptr;
  }
  unsigned int count = 0;
  std::vector<std::pair<unsigned, nvmlDevice_t>> devices;
  if (api.device_count(&count) == kNvmlSuccess) {
    for (unsigned int i = 0; i < count; ++i) {
      nvmlDevice_t d = nullptr;
      if (api.handle_by_index(i, &d) == kNvmlSuccess) devices.emplace_back(i, d);
    }
  }
  if (devices.empty()) {
    *why = "NVML reports no GPU";
    api.shutdown();
    dlclose(lib);
    return nullptr;
  }
  return std::make_unique<NvmlProbe>(lib, api, std::move(devices));
}

}  // namespace inferscope::telemetry
