// `inferscope sim predict` and `inferscope sim serve`: the simulated engine in virtual time
// (through the same load generator as `bench`) and in real time behind the OpenAI API.
#include <fmt/format.h>

#include <pthread.h>

#include <csignal>
#include <chrono>
#include <fstream>
#include <sstream>

#include "command.h"
#include "inferscope/core/errors.h"
#include "inferscope/sim/config.h"
#include "inferscope/sim/profile.h"
#include "inferscope/sim/server.h"
#include "inferscope/sim/sim_target.h"
#include "inferscope/workload/tokenizer.h"
#include "run_common.h"
#include "sim_flags.h"
#include "telemetry_glue.h"

namespace inferscope::app {
namespace {

// Engine-side totals for summary.json's "engine" object.
nlohmann::json engine_summary(const sim::Simulator& s, double virtual_s, double wall_s) {
  const auto& m = s.metrics();
  double busy_ms = 0, max_kv = 0;
  for (const auto& st : s.steps()) {
    busy_ms += ns_to_ms(st.t_end - st.t_start);
    max_kv = std::max(max_kv, st.kv_usage);
  }
  const double replicas = s.config().data_parallel_size;
  return {{"steps", s.steps().size()},
          {"accelerator_busy_fraction", virtual_s > 0 ? busy_ms / 1e3 / virtual_s / replicas : 0.0},
          {"frontend_busy_fraction", virtual_s > 0 ? s.frontend_busy_s() / virtual_s / s.config().frontend_workers : 0.0},
          {"kv_usage_max", max_kv},
          {"preemptions", m.preemptions},
          {"prefix_cache_queries", m.prefix_cache_queries},
          {"prefix_cache_hits", m.prefix_cache_hits},
          {"prefix_cache_hit_rate",
           m.prefix_cache_queries ? static_cast<double>(m.prefix_cache_hits) / static_cast<double>(m.prefix_cache_queries) : 0.0},
          {"spec_decode_draft_tokens", m.spec_draft_tokens},
          {"spec_decode_accepted_tokens", m.spec_accepted_tokens},
          {"simulated_s", virtual_s},
          {"wall_s", wall_s},
          {"speedup_vs_real_time", wall_s > 0 ? virtual_s / wall_s : 0.0}};
}

struct PredictCommand {
  EngineFlags engine;
  LoadFlags load;
  TelemetryFlags telemetry;

  void run() {
    const sim::EngineConfig cfg = engine.build(load.seed);
    sim::SimTarget target(cfg);
    workload::SimTextTokenizer tok;
    PreparedWorkload w = prepare_workload(load, tok);
    nlohmann::json manifest = engine_manifest(cfg, target.engine().kv_blocks_per_replica());
    manifest["workload"] = w.description;

    const auto wall0 = std::chrono::steady_clock::now();
    double wall_s = 0;
    // Telemetry from the engine's own metrics page, sampled in virtual time.
    RunTelemetry tel(telemetry, [&target] { return target.engine().render_metrics(); }, target.clock());
    RunHooks hooks = tel.start();
    auto telemetry_summary = hooks.finish_summary;
    auto telemetry_files = hooks.write_files;
    hooks.finish_summary = [&, telemetry_summary](nlohmann::json& j) {
      wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
      j["engine"] = engine_summary(target.engine(), ns_to_s(target.clock().now_ns()), wall_s);
      if (telemetry_summary) telemetry_summary(j);
    };
    hooks.write_files = [&, telemetry_files](const std::string& dir) {
      std::ostringstream out;
      sim::write_engine_series(out, target.engine().steps(), 0);
      write_file_atomically(dir + "/engine.jsonl", out.str());
      if (telemetry_files) telemetry_files(dir);
    };
    RunOutcome out = execute_run(target, *w.source, load, w.trace_times, manifest, "predict", hooks);
    const auto& e = out.summary["engine"];
    fmt::print("{}", format_summary_table(out, fmt::format("inferscope sim predict  {} on {}{}  (virtual time)",
                                                           cfg.model_name(), cfg.tensor_parallel_size > 1
                                                               ? fmt::format("{}× ", cfg.tensor_parallel_size) : "",
                                                           cfg.gpu.name)));
    fmt::print("engine     {} steps, accelerator busy {:.0f}%, front end busy {:.0f}%, KV max {:.0f}%, {} preemptions, "
               "prefix hits {:.1f}%\n",
               e["steps"].get<std::size_t>(), 100 * e["accelerator_busy_fraction"].get<double>(),
               100 * e["frontend_busy_fraction"].get<double>(), 100 * e["kv_usage_max"].get<double>(),
               e["preemptions"].get<std::uint64_t>(), 100 * e["prefix_cache_hit_rate"].get<double>());
    fmt::print("simulated  {:.1f} s in {:.3f} s wall ({:.0f}× real time)\n", e["simulated_s"].get<double>(), wall_s,
               e["speedup_vs_real_time"].get<double>());
    if (!load.out_dir.empty())
      fmt::print("wrote {0}/summary.json, {0}/requests.jsonl, {0}/engine.jsonl and {0}/telemetry.jsonl\n", load.out_dir);
    if (out.interrupted) set_exit_code(130);
  }
};

struct ServeCommand {
  EngineFlags engine;
  sim::ServeOptions opt;
  std::uint64_t seed = 0;

  void add(CLI::App* c) {
    engine.add(c);
    c->add_option("--host", opt.address, "Address to bind (127.0.0.1: loopback only)")->capture_default_str();
    c->add_option("--port", opt.port, "Port (0: any free port, printed at start)")->capture_default_str();
    c->add_option("--time-scale", opt.time_scale, "Simulated seconds per wall second")->capture_default_str();
    c->add_option("--ground-truth", opt.ground_truth_path,
                  "Write per request arrival, scheduled, first-token and every token's time (JSONL)");
    c->add_option("--seed", seed, "Seed for stops, speculative acceptance and faults")->capture_default_str();
    auto& f = opt.faults;
    c->add_option("--fault-http-500-rate", f.http_500_rate, "Share of requests answered HTTP 500");
    c->add_option("--fault-http-503-rate", f.http_503_rate, "Share of requests answered HTTP 503");
    c->add_option("--fault-http-429-rate", f.http_429_rate, "Share of requests answered HTTP 429 with Retry-After");
    c->add_option("--fault-retry-after", f.retry_after_s, "Retry-After seconds of a 429")->capture_default_str();
    c->add_option("--fault-error-event-rate", f.error_event_rate, "Share of streams ending in an error event");
    c->add_option("--fault-reset-rate", f.reset_rate, "Share of streams cut by a TCP reset");
    c->add_option("--fault-stall-rate", f.stall_rate, "Share of streams that stall mid-way");
    c->add_option("--fault-stall-s", f.stall_s, "Stall length in seconds (0: forever)")->capture_default_str();
    c->add_option("--fault-malformed-rate", f.malformed_rate, "Share of streams with one malformed chunk");
    c->add_option("--fault-cold-start-requests", f.cold_start_requests, "The first N requests start cold");
    c->add_option("--fault-cold-start-s", f.cold_start_s, "Extra delay of a cold start (s)")->capture_default_str();
  }

  void run() {
    const sim::EngineConfig cfg = engine.build(seed);
    opt.faults.seed = seed;
    // SIGINT/SIGTERM are blocked before the server's threads start (they inherit the
    // mask) and taken here with sigwait: a clean stop without work in a signal handler.
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
    sim::SimServer server(cfg, opt);
    server.start();
    fmt::print("inferscope sim serve: {} on {}{} at {} (time scale {}); Ctrl-C stops\n", cfg.model_name(),
               cfg.tensor_parallel_size > 1 ? fmt::format("{}× ", cfg.tensor_parallel_size) : "", cfg.gpu.name,
               server.base_url(), opt.time_scale);
    std::fflush(stdout);
    int sig = 0;
    sigwait(&sigs, &sig);
    server.stop();
    pthread_sigmask(SIG_UNBLOCK, &sigs, nullptr);
  }
};

void register_sim(CLI::App& root) {
  auto* sim = root.add_subcommand("sim", "The simulated engine: predict what-ifs in virtual time, or serve the OpenAI API");
  sim->require_subcommand(1);

  static PredictCommand predict;
  auto* p = sim->add_subcommand("predict", "Run a workload against the simulated engine in virtual time");
  predict.engine.add(p);
  add_load_flags(p, predict.load, /*out_required=*/false);
  p->add_option("--telemetry-interval", predict.telemetry.interval_s,
                "Virtual seconds between samples of the engine's metrics page")->capture_default_str();
  p->add_flag("--no-telemetry", predict.telemetry.off, "Do not sample the engine's metrics");
  p->callback([] { predict.run(); });

  static ServeCommand serve;
  auto* sv = sim->add_subcommand("serve", "Serve the OpenAI API from the simulated engine in real time");
  serve.add(sv);
  sv->callback([] { serve.run(); });
}

const CommandRegistration reg{50, &register_sim};

}  // namespace
}  // namespace inferscope::app
