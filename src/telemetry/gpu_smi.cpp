#include <sys/wait.h>

#include <array>
#include <charconv>
#include <cstdio>

#include "inferscope/telemetry/gpu.h"

namespace inferscope::telemetry {

const std::string_view kNvidiaSmiQuery =
    "index,name,uuid,utilization.gpu,utilization.memory,memory.used,memory.total,clocks.sm,clocks.mem,"
    "power.draw,power.limit,temperature.gpu,clocks.max.sm,clocks.max.mem";

namespace {

constexpr std::size_t kFields = 14;
constexpr double kMiB = 1024.0 * 1024.0;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// "[N/A]", "[Not Supported]", "N/A" and anything else non-numeric: not reported.
std::optional<double> number(std::string_view s, double scale = 1.0) {
  s = trim(s);
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return v * scale;
}

class SmiProbe final : public GpuProbe {
 public:
  SmiProbe(CommandRunner runner, std::vector<GpuInfo> first_info)
      : runner_(std::move(runner)), info_(std::move(first_info)) {}
  std::string_view backend() const override { return "nvidia-smi"; }
  std::vector<GpuInfo> info() override {
    std::vector<GpuInfo> infos;
    if (auto text = runner_(command())) parse_nvidia_smi_csv(*text, &infos);
    if (!infos.empty()) info_ = std::move(infos);
    return info_;
  }
  std::vector<GpuSample> sample() override {
    auto text = runner_(command());
    if (!text) return {};
    return parse_nvidia_smi_csv(*text);
  }
  static std::string command() {
    return "nvidia-smi --query-gpu=" + std::string(kNvidiaSmiQuery) + " --format=csv,noheader,nounits 2>/dev/null";
  }

 private:
  CommandRunner runner_;
  std::vector<GpuInfo> info_;
};

}  // namespace

std::vector<GpuSample> parse_nvidia_smi_csv(std::string_view text, std::vector<GpuInfo>* infos) {
  std::vector<GpuSample> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    std::vector<std::string_view> f;
    std::size_t start = 0;
    for (;;) {
      const std::size_t comma = line.find(',', start);
      f.push_back(trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    if (f.size() != kFields) continue;
    const auto index = number(f[0]);
    if (!index || *index < 0) continue;
    GpuSample s;
    s.index = static_cast<unsigned>(*index);
    s.util_pct = number(f[3]);
    s.mem_util_pct = number(f[4]);
    s.mem_used_bytes = number(f[5], kMiB);
    s.mem_total_bytes = number(f[6], kMiB);
    s.sm_clock_mhz = number(f[7]);
    s.mem_clock_mhz = number(f[8]);
    s.power_w = number(f[9]);
    s.power_limit_w = number(f[10]);
    s.temperature_c = number(f[11]);
    out.push_back(s);
    if (infos) {
      GpuInfo g;
      g.index = s.index;
      g.name = std::string(f[1]);
      g.uuid = std::string(f[2]);
      g.mem_total_bytes = s.mem_total_bytes;
      g.power_limit_w = s.power_limit_w;
      g.sm_clock_max_mhz = number(f[12]);
      g.mem_clock_max_mhz = number(f[13]);
      infos->push_back(std::move(g));
    }
  }
  return out;
}

std::optional<std::string> run_command(const std::string& command) {
  FILE* p = popen(command.c_str(), "r");
  if (!p) return std::nullopt;
  std::string out;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return out;
}

std::unique_ptr<GpuProbe> open_nvidia_smi(std::string* why, CommandRunner runner) {
  std::string dummy;
  if (!why) why = &dummy;
  const auto text = runner(SmiProbe::command());
  if (!text) {
    *why = "nvidia-smi did not run";
    return nullptr;
  }
  std::vector<GpuInfo> infos;
  parse_nvidia_smi_csv(*text, &infos);
  if (infos.empty()) {
    *why = "nvidia-smi reports no GPU";
    return nullptr;
  }
  return std::make_unique<SmiProbe>(std::move(runner), std::move(infos));
}

std::unique_ptr<GpuProbe> open_gpu_probe(GpuBackend backend, std::string* note) {
  std::string dummy;
  if (!note) note = &dummy;
  note->clear();
  if (backend == GpuBackend::off) return nullptr;
  std::string why_nvml, why_smi;
  if (backend != GpuBackend::nvidia_smi)
    if (auto p = open_nvml(&why_nvml)) return p;
  if (backend != GpuBackend::nvml)
    if (auto p = open_nvidia_smi(&why_smi)) return p;
  *note = "no GPU telemetry: " + (why_nvml.empty() ? why_smi : why_smi.empty() ? why_nvml : why_nvml + "; " + why_smi);
  return nullptr;
}

nlohmann::json to_json(const GpuInfo& g) {
  const auto opt = [](const std::optional<double>& v) -> nlohmann::json {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  return {{"index", g.index},
          {"name", g.name},
          {"uuid", g.uuid},
          {"mem_total_bytes", opt(g.mem_total_bytes)},
          {"sm_clock_max_mhz", opt(g.sm_clock_max_mhz)},
          {"mem_clock_max_mhz", opt(g.mem_clock_max_mhz)},
          {"app_sm_clock_mhz", opt(g.app_sm_clock_mhz)},
          {"app_mem_clock_mhz", opt(g.app_mem_clock_mhz)},
          {"power_limit_w", opt(g.power_limit_w)}};
}

}  // namespace inferscope::telemetry
