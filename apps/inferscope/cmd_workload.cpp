// `inferscope workload inspect FILE|SPEC [--json]`: what traffic a workload or trace is,
// before any of it is sent.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <string>

#include "command.h"
#include "inferscope/workload/workload.h"

namespace inferscope::app {
namespace {

struct InspectCommand {
  std::string spec;
  std::string tokenizer = "sim";
  std::uint64_t seed = 1;
  std::int64_t count = 1000;
  std::int64_t max_len = 131072;
  bool json = false;

  void run() const {
    const auto cfg = workload::parse_workload(spec, {.max_len = max_len});
    const auto tok = workload::load_tokenizer(tokenizer);
    const auto s = workload::inspect(cfg, *tok, seed, count);
    auto j = workload::to_json(s);
    // The input lengths a scan should cover: 512, 2K, 8K, this traffic's p95, the model's
    // maximum (`inferscope run --input-len matrix` scans them).
    const auto matrix = workload::input_matrix_points(s, max_len);
    j["matrix_input_tokens"] = matrix;
    if (json) {
      fmt::print("{}\n", j.dump(2));
      return;
    }
    auto num = [](const nlohmann::json& v, const char* fmtspec) {
      return v.is_null() ? std::string("-") : fmt::format(fmt::runtime(fmtspec), v.get<double>());
    };
    fmt::print("workload       {}\n", cfg.trace ? cfg.trace->file : spec);
    fmt::print("requests       {}\n", s.count);
    fmt::print("duration       {} s\n", num(j["duration_s"], "{:.1f}"));
    fmt::print("rate           {} req/s (peak {} req/min)\n", num(j["rate_rps"], "{:.3f}"), num(j["peak_rate_rpm"], "{:.0f}"));
    fmt::print("{:<14} {:>8} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8}\n", "tokens", "count", "mean", "p50", "p90", "p95", "p99",
               "max");
    for (const char* k : {"input_tokens", "output_tokens"}) {
      const auto& t = j[k];
      fmt::print("{:<14} {:>8} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8}\n", k == std::string("input_tokens") ? "input" : "output",
                 t["count"].get<std::int64_t>(), num(t["mean"], "{:.1f}"), num(t["p50"], "{:.0f}"), num(t["p90"], "{:.0f}"),
                 num(t["p95"], "{:.0f}"), num(t["p99"], "{:.0f}"), num(t["max"], "{:.0f}"));
    }
    fmt::print("prefix reuse   {:.1f}% of {}-token prompt blocks seen earlier (infinite cache)\n",
               100.0 * s.prefix_reuse_fraction, s.block_tokens);
    fmt::print("matrix         input lengths to scan: {} (512, 2K, 8K, p95, --max-len)\n", fmt::join(matrix, ", "));
  }
};

void register_workload(CLI::App& root) {
  auto* w = root.add_subcommand("workload", "Inspect workloads and traces");
  w->require_subcommand(1);
  auto cmd = std::make_shared<InspectCommand>();
  auto* i = w->add_subcommand("inspect", "Request count, arrival rate, token statistics and prefix reuse of a trace or spec");
  i->add_option("spec", cmd->spec, "Trace file, workload YAML file, or inline YAML spec")->required();
  i->add_option("--tokenizer", cmd->tokenizer, "Tokenizer for synthetic prompts and text traces (default: sim)");
  i->add_option("--seed", cmd->seed, "Seed for synthetic workloads");
  i->add_option("--count", cmd->count, "Sessions to draw from a synthetic spec without 'count'");
  i->add_option("--max-len", cmd->max_len, "Model context length: every length is clamped to it");
  i->add_flag("--json", cmd->json, "Print JSON");
  i->callback([cmd] { cmd->run(); });
}

const CommandRegistration reg{70, &register_workload};

}  // namespace
}  // namespace inferscope::app
