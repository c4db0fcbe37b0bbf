// `inferscope bench`: drive a real endpoint and time every token.
#include <fmt/format.h>

#include "command.h"
#include "run_common.h"
#include "target_flags.h"
#include "telemetry_glue.h"

namespace inferscope::app {
namespace {

struct BenchCommand {
  TargetFlags target;
  LoadFlags load;
  TelemetryFlags telemetry;

  void run() {
    auto tok = make_prompt_tokenizer(target);
    PreparedWorkload w = prepare_workload(load, *tok);
    // Chunk token counts: only a real tokenizer of the model can count them; without one
    // a content chunk counts as one token unless the server streams usage.
    auto http = make_target_from_flags(target, target.tokenizer.empty() ? nullptr : tok.get());
    nlohmann::json manifest = target_manifest(target);
    manifest["workload"] = w.description;
    RunTelemetry tel(telemetry, target.url, http->clock());
    RunOutcome out = execute_run(*http, *w.source, load, w.trace_times, manifest, "bench", tel.start());
    std::string title = fmt::format("inferscope bench  {}  model {}  api {}", target.url, target.model, target.api);
    fmt::print("{}", format_summary_table(out, title));
    if (!load.out_dir.empty()) fmt::print("wrote {}/summary.json and {}/requests.jsonl\n", load.out_dir, load.out_dir);
    if (out.interrupted) set_exit_code(130);
  }
};

void register_bench(CLI::App& root) {
  static BenchCommand cmd;
  auto* sub = root.add_subcommand("bench", "Benchmark a serving endpoint: stream requests, time every token");
  add_target_flags(sub, cmd.target, /*url_required=*/true);
  sub->get_option("--model")->required();
  add_load_flags(sub, cmd.load);
  add_telemetry_flags(sub, cmd.telemetry);
  sub->callback([] { cmd.run(); });
}

const CommandRegistration reg{20, &register_bench};

}  // namespace
}  // namespace inferscope::app
