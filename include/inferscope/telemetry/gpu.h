#pragma once
// GPU readings per device: NVML loaded at run time with dlopen("libnvidia-ml.so.1") so the
// binary neither links nor needs the driver; `nvidia-smi --query-gpu` as a fallback.
//
// Threading: a GpuProbe is used from one thread at a time (the sampler thread).
// Units: percent 0..100, bytes, MHz, watts, °C. A field the device does not report is
// nullopt, never 0.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace inferscope::telemetry {

struct GpuSample {
  unsigned index = 0;
  std::optional<double> util_pct;      // SM busy time
  std::optional<double> mem_util_pct;  // memory-controller busy time
  std::optional<double> mem_used_bytes, mem_total_bytes;
  std::optional<double> sm_clock_mhz, mem_clock_mhz;
  std::optional<double> power_w, power_limit_w;
  std::optional<double> temperature_c;
};

// What must stay fixed within an experiment; goes into the run manifest.
struct GpuInfo {
  unsigned index = 0;
  std::string name, uuid;
  std::optional<double> mem_total_bytes;
  std::optional<double> sm_clock_max_mhz, mem_clock_max_mhz;
  std::optional<double> app_sm_clock_mhz, app_mem_clock_mhz;  // application clocks (NVML)
  std::optional<double> power_limit_w;
};
nlohmann::json to_json(const GpuInfo& g);

class GpuProbe {
 public:
  virtual ~GpuProbe() = default;
  virtual std::string_view backend() const = 0;  // "nvml" | "nvidia-smi"
  virtual std::string driver_version() const { return {}; }
  virtual std::vector<GpuInfo> info() = 0;
  virtual std::vector<GpuSample> sample() = 0;
};

// NVML via dlopen(library). nullptr (and `why` says why) when the library, a symbol or a
// device is missing.
inline constexpr const char* kNvmlLibrary = "libnvidia-ml.so.1";
std::unique_ptr<GpuProbe> open_nvml(std::string* why, const char* library = kNvmlLibrary);

// Runs a shell command and returns its stdout, or nullopt when it could not run or
// exited non-zero. Injectable for tests.
using CommandRunner = std::function<std::optional<std::string>(const std::string& command)>;
std::optional<std::string> run_command(const std::string& command);

// The nvidia-smi query the fallback issues (fields in the order parse_nvidia_smi_csv reads).
extern const std::string_view kNvidiaSmiQuery;
// Parses `nvidia-smi --query-gpu=<kNvidiaSmiQuery> --format=csv,noheader,nounits` output:
// one line per GPU; "[N/A]" / "[Not Supported]" fields become nullopt. Lines with the
// wrong number of fields are skipped. Fills `infos` (may be null) with the static part.
std::vector<GpuSample> parse_nvidia_smi_csv(std::string_view text, std::vector<GpuInfo>* infos = nullptr);

// nvidia-smi fallback; nullptr when it does not run or reports no GPU.
std::unique_ptr<GpuProbe> open_nvidia_smi(std::string* why, CommandRunner runner = run_command);

enum class GpuBackend : std::uint8_t { automatic, nvml, nvidia_smi, off };
// NVML first, then nvidia-smi (automatic). nullptr when neither works; `note` then holds
// one sentence saying so (print it once; the run goes on without GPU telemetry).
std::unique_ptr<GpuProbe> open_gpu_probe(GpuBackend backend, std::string* note);

}  // namespace inferscope::telemetry
