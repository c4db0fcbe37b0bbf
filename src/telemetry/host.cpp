#include "inferscope/telemetry/host.h"

#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

namespace inferscope::telemetry {
namespace {

std::vector<std::string_view> split_ws(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

std::optional<std::uint64_t> to_u64(std::string_view s) {
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

template <typename F>
void for_each_line(std::string_view text, F&& f) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    f(text.substr(pos, end - pos));
    pos = end + 1;
  }
}

std::optional<std::string> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

double rate(std::uint64_t before, std::uint64_t after, Nanos dt) {
  // A counter that went backwards (interface reset) gives no rate rather than a huge one.
  if (after < before || dt <= 0) return 0;
  return static_cast<double>(after - before) / ns_to_s(dt);
}

}  // namespace

std::vector<CpuTimes> parse_proc_stat(std::string_view text) {
  std::vector<CpuTimes> out;
  for_each_line(text, [&](std::string_view line) {
    if (line.substr(0, 3) != "cpu") return;
    const auto f = split_ws(line);
    if (f.size() < 5) return;
    CpuTimes c;
    c.name = std::string(f[0]);
    std::uint64_t* fields[] = {&c.user, &c.nice, &c.system, &c.idle, &c.iowait, &c.irq, &c.softirq, &c.steal};
    for (std::size_t i = 0; i < 8 && i + 1 < f.size(); ++i) {
      const auto v = to_u64(f[i + 1]);
      if (!v) return;
      *fields[i] = *v;
    }
    out.push_back(std::move(c));
  });
  return out;
}

std::optional<double> cpu_busy_pct(const CpuTimes& before, const CpuTimes& after) {
  if (after.total() <= before.total()) return std::nullopt;
  const auto total = static_cast<double>(after.total() - before.total());
  const double idle = after.idle_all() >= before.idle_all() ? static_cast<double>(after.idle_all() - before.idle_all()) : 0.0;
  return std::clamp(100.0 * (1.0 - idle / total), 0.0, 100.0);
}

std::optional<MemInfo> parse_meminfo(std::string_view text) {
  std::optional<std::uint64_t> total, available;
  for_each_line(text, [&](std::string_view line) {
    const auto f = split_ws(line);
    if (f.size() < 2) return;
    const std::uint64_t unit = (f.size() >= 3 && f[2] == "kB") ? 1024 : 1;
    if (f[0] == "MemTotal:") {
      if (auto v = to_u64(f[1])) total = *v * unit;
    } else if (f[0] == "MemAvailable:") {
      if (auto v = to_u64(f[1])) available = *v * unit;
    }
  });
  if (!total || !available) return std::nullopt;
  return MemInfo{*total, *available};
}

std::vector<NetDev> parse_net_dev(std::string_view text) {
  std::vector<NetDev> out;
  for_each_line(text, [&](std::string_view line) {
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;
    const auto name = split_ws(line.substr(0, colon));
    if (name.size() != 1) return;
    const auto f = split_ws(line.substr(colon + 1));
    // Receive: bytes packets errs drop fifo frame compressed multicast; transmit: bytes …
    if (f.size() < 9) return;
    const auto rx = to_u64(f[0]);
    const auto tx = to_u64(f[8]);
    if (!rx || !tx) return;
    out.push_back(NetDev{std::string(name[0]), *rx, *tx});
  });
  return out;
}

HostSampler::HostSampler(std::string proc_root) : root_(std::move(proc_root)) {}

Values HostSampler::sample(Nanos t) {
  Values v;
  const Nanos dt = prev_t_ ? t - *prev_t_ : 0;
  if (auto text = slurp(root_ + "/stat")) {
    auto cpus = parse_proc_stat(*text);
    if (dt > 0 && !prev_cpu_.empty()) {
      std::optional<double> max_core;
      Values cores;
      for (const auto& c : cpus) {
        const auto it = std::find_if(prev_cpu_.begin(), prev_cpu_.end(), [&](const CpuTimes& p) { return p.name == c.name; });
        if (it == prev_cpu_.end()) continue;
        const auto pct = cpu_busy_pct(*it, c);
        if (!pct) continue;
        if (c.name == "cpu") {
          v.emplace_back("cpu_pct", *pct);
        } else {
          cores.emplace_back(c.name + "_pct", *pct);
          max_core = std::max(max_core.value_or(0.0), *pct);
        }
      }
      if (max_core) v.emplace_back("cpu_max_core_pct", *max_core);
      v.insert(v.end(), cores.begin(), cores.end());
    }
    prev_cpu_ = std::move(cpus);
  }
  if (auto text = slurp(root_ + "/meminfo")) {
    if (auto m = parse_meminfo(*text)) {
      v.emplace_back("mem_used_bytes", static_cast<double>(m->total_bytes - std::min(m->available_bytes, m->total_bytes)));
      v.emplace_back("mem_total_bytes", static_cast<double>(m->total_bytes));
    }
  }
  if (auto text = slurp(root_ + "/net/dev")) {
    std::uint64_t rx = 0, tx = 0, lo = 0;
    for (const auto& d : parse_net_dev(*text)) {
      if (d.iface == "lo") {
        lo += d.rx_bytes;  // loopback: every byte is both sent and received; count it once
      } else {
        rx += d.rx_bytes;
        tx += d.tx_bytes;
      }
    }
    if (dt > 0 && prev_net_) {
      v.emplace_back("net_rx_bytes_per_s", rate(prev_net_->first, rx, dt));
      v.emplace_back("net_tx_bytes_per_s", rate(prev_net_->second, tx, dt));
    }
    if (dt > 0 && prev_lo_) v.emplace_back("lo_bytes_per_s", rate(*prev_lo_, lo, dt));
    prev_net_ = {rx, tx};
    prev_lo_ = lo;
  }
  prev_t_ = t;
  return v;
}

Nanos process_cpu_ns() {
  rusage ru{};
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  const auto tv = [](const timeval& x) { return static_cast<Nanos>(x.tv_sec) * kNsPerSec + static_cast<Nanos>(x.tv_usec) * kNsPerUs; };
  return tv(ru.ru_utime) + tv(ru.ru_stime);
}

}  // namespace inferscope::telemetry
