// `inferscope run`: the main job. Without --url it starts the simulated engine (Llama-3-8B
// on H200-SXM, bf16, unless told otherwise) on a free loopback port; with --url it uses the
// endpoint. Then it scans concurrency (default 1, 4, 16, 64) — and input and output length
// when given lists — with `bench`'s machinery, writes each point's files under one folder,
// and prints one row per point, marking the first point that misses an SLO.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "command.h"
#include "inferscope/core/errors.h"
#include "inferscope/sim/server.h"
#include "inferscope/workload/distribution.h"
#include "run_common.h"
#include "sim_flags.h"
#include "target_flags.h"
#include "telemetry_glue.h"

namespace inferscope::app {
namespace {

std::string cell(const nlohmann::json& stat, const char* key) {
  if (!stat.contains(key) || stat[key].is_null()) return "-";
  return fmt::format("{:.1f}", stat[key].get<double>());
}

// The telemetry series maximum (e.g. engine.kv_usage), or nullopt when not sampled.
std::optional<double> series_max(const nlohmann::json& summary, const std::string& key) {
  const auto* t = summary.contains("telemetry") ? &summary["telemetry"] : nullptr;
  if (!t || !t->contains("series") || !(*t)["series"].contains(key)) return std::nullopt;
  const auto& s = (*t)["series"][key];
  if (!s.contains("max") || !s["max"].is_number()) return std::nullopt;
  return s["max"].get<double>();
}

// A list of positive token counts ("512,2048").
std::vector<int> parse_lengths(const std::vector<std::string>& items, const std::string& flag) {
  std::vector<int> out;
  for (const auto& s : items) {
    char* end = nullptr;
    const long v = std::strtol(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || v < 1 || v > (1 << 24))
      throw InputError(flag, 0, s, "expected token counts like 512,2048 (or 'matrix' for --input-len)");
    out.push_back(static_cast<int>(v));
  }
  return out;
}

struct RunCommand {
  TargetFlags target;
  EngineFlags engine;
  TelemetryFlags telemetry;
  std::vector<int> concurrency = {1, 4, 16, 64};
  std::vector<std::string> input_lens = {"512"};  // or "matrix"
  std::vector<std::string> output_lens = {"128"};
  std::size_t requests = 0;  // per point; 0: max(4 × concurrency, what the SLO percentiles need, 16)
  LoadFlags load;            // workload, seed, warm-up, SLOs, output folder

  // 512, 2K, 8K, the workload's input p95 (when --workload is given) and the model's
  // maximum context (known for the simulated engine, or from --max-model-len) less the
  // longest output, so prompt + output still fit the context.
  std::vector<int> matrix_inputs(const workload::Tokenizer& tok, std::int64_t model_max, int max_output) const {
    const std::int64_t room = std::max<std::int64_t>(1, (model_max > 0 ? model_max : 8192) - max_output);
    const auto points = load.workload.empty()
                            ? workload::matrix_points(0, room)
                            : workload::input_matrix_points(
                                  workload::inspect(workload::parse_workload(load.workload), tok, load.seed, 1000), room);
    return {points.begin(), points.end()};
  }

  void run() {
    for (int c : concurrency)
      if (c < 1) throw InputError("--concurrency", 0, std::to_string(c), "every point must be at least 1");
    const bool matrix = input_lens.size() == 1 && input_lens[0] == "matrix";
    std::vector<int> inputs = matrix ? std::vector<int>{} : parse_lengths(input_lens, "--input-len");
    const std::vector<int> outputs = parse_lengths(output_lens, "--output-len");
    if (load.out_dir.empty()) load.out_dir = "runs/run-" + iso_time_now();
    // Fail before starting anything; size each point so every SLO percentile claimed has
    // enough samples (p95 needs 20, p99 100).
    std::size_t min_samples = 16;
    for (const auto& slo : parse_slos(load.slo))
      min_samples = std::max(min_samples, samples_needed(slo.percentile));

    std::unique_ptr<sim::SimServer> server;
    std::string title;
    std::int64_t model_max = engine.cfg.max_model_len;
    if (target.url.empty()) {
      const sim::EngineConfig cfg = engine.build(load.seed);
      model_max = cfg.effective_max_model_len();
      sim::ServeOptions opt;
      opt.address = "127.0.0.1";
      opt.port = 0;
      server = std::make_unique<sim::SimServer>(cfg, opt);
      server->start();
      target.url = server->base_url();
      target.model = cfg.model_name();
      target.api = "completions";
      target.engine = "vllm";
      title = fmt::format("simulated engine: {} on {} ({}), serving at {}", cfg.model_name(), cfg.gpu.name,
                          cfg.quantization == sim::Quantization::none ? "bf16" : std::string(to_string(cfg.quantization)),
                          target.url);
    } else {
      if (target.model.empty()) throw InputError("--model", "required with --url: the model name the server serves");
      title = fmt::format("endpoint {} model {}", target.url, target.model);
    }
    auto tok = make_prompt_tokenizer(target);
    if (matrix) inputs = matrix_inputs(*tok, model_max, *std::max_element(outputs.begin(), outputs.end()));
    ensure_output_dir(load.out_dir);
    const bool grid = inputs.size() > 1 || outputs.size() > 1;
    fmt::print("inferscope run — {}\n", title);
    fmt::print("workload: {}; {} points; results in {}/\n",
               load.workload.empty() ? fmt::format("{} input / {} output tokens", fmt::join(inputs, ","), fmt::join(outputs, ","))
                                     : load.workload,
               inputs.size() * outputs.size() * concurrency.size(), load.out_dir);

    auto http = make_target_from_flags(target, target.tokenizer.empty() ? nullptr : tok.get());
    nlohmann::json points = nlohmann::json::array();
    std::string rows = fmt::format("{}{:>5} {:>5} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>7} {:>5} {:>6} {:>5}  {}\n",
                                   grid ? fmt::format("{:>6} {:>6} ", "in", "out") : "", "conc", "reqs", "TTFT p50",
                                   "TTFT p95", "TPOT p50", "TPOT p95", "ITL p95", "E2E p95", "out tok/s", "req/s", "err",
                                   "KV max", "wait", load.slo.empty() ? "" : "SLO");
    std::optional<std::string> first_violation;
    std::size_t index = 0;
    bool interrupted = false;
    for (int in : inputs) {
      for (int out_len : outputs) {
        for (int c : concurrency) {
          if (interrupted) break;
          LoadFlags point = load;
          point.input_len = in;
          point.output_len = out_len;
          point.concurrency = c;
          point.rate = 0;
          // A fresh prompt seed per point: the server's prefix cache must not serve one
          // point's prompts from the previous point's run.
          point.seed = load.seed + 1000003 * index++;
          point.requests = requests ? requests : std::max(min_samples, 4 * static_cast<std::size_t>(c));
          point.duration_s = 0;
          const std::string name = grid ? fmt::format("in{}-out{}-c{}", in, out_len, c) : fmt::format("c{}", c);
          point.out_dir = fmt::format("{}/{}", load.out_dir, name);
          PreparedWorkload w = prepare_workload(point, *tok);
          nlohmann::json manifest = target_manifest(target);
          manifest["workload"] = w.description;
          if (server) manifest["target"] = "sim-serve";
          RunTelemetry tel(telemetry, target.url, http->clock());
          RunOutcome out = execute_run(*http, *w.source, point, w.trace_times, manifest, fmt::format("run {}", name), tel.start());
          const auto& s = out.summary;
          const auto kv = series_max(s, "engine.kv_usage");
          const auto waiting = series_max(s, "engine.waiting");
          std::string mark;
          for (const auto& r : out.metrics.slos)
            if (!r.met) {
              mark += fmt::format(" {} {:.1f}ms", r.slo.text, r.observed_ms);
              if (!first_violation)
                first_violation = fmt::format("{}: {} observed {:.1f} ms", name, r.slo.text, r.observed_ms);
            }
          if (!out.valid) mark += " INVALID";
          rows += fmt::format("{}{:>5} {:>5} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10.1f} {:>7.2f} {:>5} {:>6} {:>5} {}\n",
                              grid ? fmt::format("{:>6} {:>6} ", in, out_len) : "", c, out.metrics.issued,
                              cell(s["ttft_ms"], "p50"), cell(s["ttft_ms"], "p95"), cell(s["tpot_ms"], "p50"),
                              cell(s["tpot_ms"], "p95"), cell(s["itl_ms"], "p95"), cell(s["e2e_ms"], "p95"),
                              out.metrics.output_tokens_per_s, out.metrics.requests_per_s, out.metrics.failed,
                              kv ? fmt::format("{:.1f}%", 100 * *kv) : "-", waiting ? fmt::format("{:.0f}", *waiting) : "-",
                              mark.empty() ? (load.slo.empty() ? "" : " met") : " ←" + mark);
          points.push_back({{"name", name}, {"concurrency", c}, {"input_len", in}, {"output_len", out_len},
                            {"dir", point.out_dir}, {"valid", out.valid}, {"ttft_ms", s["ttft_ms"]},
                            {"tpot_ms", s["tpot_ms"]}, {"itl_ms", s["itl_ms"]}, {"e2e_ms", s["e2e_ms"]},
                            {"output_tokens_per_s", s["output_tokens_per_s"]}, {"requests_per_s", s["requests_per_s"]},
                            {"goodput_rps", s["goodput_rps"]}, {"failed", s["failed"]}, {"slos", s["slos"]}});
          if (out.interrupted) {
            set_exit_code(130);
            interrupted = true;
          }
        }
      }
    }
    if (server) server->stop();
    // Columns are padded to the right; trailing blanks of the last column go.
    std::string table;
    for (std::size_t pos = 0; pos < rows.size();) {
      const std::size_t nl = rows.find('\n', pos);
      std::string line = rows.substr(pos, nl - pos);
      line.erase(line.find_last_not_of(' ') + 1);
      table += line + "\n";
      pos = nl + 1;
    }
    fmt::print("\n{}", table);
    if (!load.slo.empty())
      fmt::print("{}\n", first_violation ? "first SLO violation at " + *first_violation
                                         : std::string("every point met every SLO"));
    nlohmann::json sweep = {{"title", title},
                            {"points", points},
                            {"first_slo_violation", first_violation ? nlohmann::json(*first_violation) : nlohmann::json(nullptr)}};
    write_file_atomically(load.out_dir + "/sweep.json", sweep.dump(2) + "\n");
    fmt::print("wrote {}/sweep.json and one folder per point (summary.json, requests.jsonl, telemetry.jsonl)\n",
               load.out_dir);
  }
};

void register_run(CLI::App& root) {
  static RunCommand cmd;
  auto* sub = root.add_subcommand(
      "run", "Scan concurrency (and lengths) against an endpoint, or the built-in simulated engine when no --url is given");
  add_target_flags(sub, cmd.target, /*url_required=*/false);
  cmd.engine.add(sub);
  add_telemetry_flags(sub, cmd.telemetry);
  sub->add_option("--concurrency,-c", cmd.concurrency, "Concurrency points to scan")->delimiter(',')->capture_default_str();
  sub->add_option("--requests,-n", cmd.requests, "Requests per point (default: max(16, 4 × concurrency, the samples each SLO percentile needs))");
  sub->add_option("--input-len", cmd.input_lens,
                  "Prompt tokens per request; a list scans them; 'matrix' = 512, 2K, 8K, the workload's p95, the model's maximum")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--output-len", cmd.output_lens, "Output tokens per request; a list scans them")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--workload", cmd.load.workload, "Workload SPEC (YAML/inline) or FILE (trace)");
  sub->add_option("--warmup", cmd.load.warmup, "Warm-up requests before each point")->capture_default_str();
  sub->add_option("--seed", cmd.load.seed, "Seed for prompts and the simulated engine")->capture_default_str();
  sub->add_option("--slo", cmd.load.slo, "SLOs, e.g. ttft_p95=500ms,tpot_p95=50ms: marks the first point that misses one");
  sub->add_option("--out,-o", cmd.load.out_dir, "Output folder (default: runs/run-<UTC time>)");
  sub->add_flag("--quiet,-q", cmd.load.quiet, "No live progress line");
  sub->callback([] { cmd.run(); });
}

const CommandRegistration reg{10, &register_run};

}  // namespace
}  // namespace inferscope::app
