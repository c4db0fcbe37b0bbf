#include "run_common.h"

#include <fmt/format.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <ctime>
#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <fstream>

#include "inferscope/core/errors.h"
#include "inferscope/core/record_json.h"
#include "inferscope/core/version.h"
#include "inferscope/workload/request_types.h"
#include "inferscope/workload/session_metrics.h"

namespace inferscope::app {
namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_sigint(int) { g_stop.store(true); }

// Installs the Ctrl-C handler for one run and restores the previous one.
class SigintGuard {
 public:
  SigintGuard() {
    g_stop = false;
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~SigintGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  SigintGuard(const SigintGuard&) = delete;
  SigintGuard& operator=(const SigintGuard&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// Structured-output and tool-calling replies are validated against what was asked.
void check_request_output(const GenRequest& req, RequestRecord& rec) {
  workload::Validation v;
  if (!req.response_format_json.empty()) v = workload::validate_structured_reply(rec.output_text, req.response_format_json);
  if (v.ok && !req.tools_json.empty()) {
    auto calls = workload::extract_tool_calls(rec.tool_calls_json.empty() ? rec.output_text : rec.tool_calls_json);
    if (calls.empty()) v = {false, "no tool call in the reply"};
    for (const auto& call : calls) {
      if (!v.ok) break;
      v = workload::validate_tool_call(call, req.tools_json);
    }
  }
  rec.output_check = v.ok ? 1 : 0;
  rec.output_check_detail = v.error.substr(0, 200);
}

// {"checked","passed","pass_rate","by_type":{type:{checked,passed}}} over measured requests.
nlohmann::json output_check_summary(const std::vector<RequestRecord>& records) {
  std::map<std::string, std::pair<int, int>> by_type;
  int checked = 0, passed = 0;
  for (const auto& r : records) {
    if (r.warmup || r.output_check < 0) continue;
    ++checked;
    passed += r.output_check == 1;
    auto& t = by_type[r.type];
    ++t.first;
    t.second += r.output_check == 1;
  }
  nlohmann::json j = {{"checked", checked}, {"passed", passed},
                      {"pass_rate", checked ? nlohmann::json(double(passed) / checked) : nlohmann::json(nullptr)}};
  for (const auto& [type, t] : by_type) j["by_type"][type] = {{"checked", t.first}, {"passed", t.second}};
  return j;
}

std::string fmt_ms(const Summary& s, double v) { return s.count ? fmt::format("{:.2f}", v) : "-"; }

}  // namespace

void add_load_flags(CLI::App* cmd, LoadFlags& f, bool out_required) {
  cmd->add_option("--concurrency,-c", f.concurrency, "Closed loop: N users, each sends when its last request ends");
  cmd->add_option("--rate,-r", f.rate, "Open loop: requests per second");
  cmd->add_option("--arrival", f.arrival, "Open-loop arrivals: constant | poisson | gamma")->capture_default_str();
  cmd->add_option("--burstiness", f.burstiness, "Gamma shape: 1 = Poisson, <1 burstier, >1 smoother")->capture_default_str();
  cmd->add_option("--max-in-flight", f.max_in_flight, "Open loop: cap on requests in flight (0 = none)");
  cmd->add_option("--requests,-n", f.requests, "Measured requests to send");
  cmd->add_option("--duration", f.duration_s, "Stop sending after this many seconds");
  cmd->add_option("--warmup", f.warmup, "Warm-up requests sent first, recorded, not measured")->capture_default_str();
  cmd->add_option("--seed", f.seed, "Seed for the schedule and the prompts")->capture_default_str();
  cmd->add_option("--input-len", f.input_len, "Prompt tokens per request")->capture_default_str();
  cmd->add_option("--output-len", f.output_len, "Output tokens per request (max_tokens, ignore_eos)")->capture_default_str();
  cmd->add_option("--workload", f.workload, "Workload SPEC (YAML/inline) or FILE (trace) instead of fixed lengths");
  cmd->add_option("--slo", f.slo, "SLOs, e.g. ttft_p95=500ms,tpot_p95=50ms (goodput and attainment)");
  cmd->add_option("--max-send-lag", f.max_send_lag_ms, "Send-lag p99 (ms) above which the run is invalid")->capture_default_str();
  auto* out = cmd->add_option("--out,-o", f.out_dir, "Output folder for summary.json and requests.jsonl");
  if (out_required) out->required();
  cmd->add_flag("--quiet,-q", f.quiet, "No live progress line");
}

LoadOptions to_load_options(const LoadFlags& f, bool trace_times) {
  LoadOptions o;
  const bool closed = f.concurrency > 0, open = f.rate > 0;
  if (f.concurrency < 0) throw InputError("--concurrency", "must be positive");
  if (f.rate < 0) throw InputError("--rate", "must be positive");
  if (closed && open) throw InputError("--concurrency", "give --concurrency (closed loop) or --rate (open loop), not both");
  if (!closed && !open && !trace_times)
    throw InputError("--concurrency", "give --concurrency N (closed loop) or --rate R (open loop)");
  o.mode = closed ? LoadMode::closed : LoadMode::open;
  o.concurrency = closed ? f.concurrency : 1;
  o.rate_rps = f.rate;
  o.arrival = arrival_kind_from_string(f.arrival);
  o.burstiness = f.burstiness;
  if (!(f.burstiness > 0)) throw InputError("--burstiness", "must be positive");
  o.max_in_flight = f.max_in_flight;
  o.use_trace_times = trace_times && !open;
  o.requests = f.requests;
  if (f.duration_s < 0) throw InputError("--duration", "must be positive");
  o.duration_ns = s_to_ns(f.duration_s);
  if (o.requests == 0 && o.duration_ns == 0 && !trace_times)
    throw InputError("--requests", "give --requests N or --duration S");
  o.warmup = f.warmup;
  o.seed = f.seed;
  if (f.input_len < 1) throw InputError("--input-len", "must be at least 1");
  if (f.output_len < 1) throw InputError("--output-len", "must be at least 1");
  return o;
}

PreparedWorkload prepare_workload(const LoadFlags& f, const workload::Tokenizer& tok) {
  if (f.input_len < 1) throw InputError("--input-len", "must be at least 1");
  if (f.output_len < 1) throw InputError("--output-len", "must be at least 1");
  PreparedWorkload w;
  w.config = f.workload.empty() ? workload::fixed_workload(f.input_len, f.output_len)
                                : workload::parse_workload(f.workload, {.input_len = f.input_len, .output_len = f.output_len});
  w.trace_times = w.config.trace.has_value() && w.config.trace->timestamps;
  w.source = workload::make_session_source(w.config, f.seed, tok);
  w.description = workload::describe(w.config);
  w.description["tokenizer"] = tok.name();
  return w;
}

void ensure_output_dir(const std::string& dir, const std::string& flag) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw InputError(flag, 0, dir, "cannot create output folder: " + ec.message());
}

void write_file_atomically(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << content;
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path);
}

std::string iso_time_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

RunOutcome execute_run(Target& target, SessionSource& source, const LoadFlags& flags, bool trace_times,
                       nlohmann::json manifest, const std::string& label, const RunHooks& hooks) {
  LoadOptions opt = to_load_options(flags, trace_times);
  const std::vector<Slo> slos = parse_slos(flags.slo);
  if (!flags.out_dir.empty()) ensure_output_dir(flags.out_dir);

  const bool tty = isatty(STDERR_FILENO) == 1;
  const bool virtual_time = target.clock().is_virtual();
  if (!flags.quiet && !virtual_time) {
    opt.progress_interval_ns = tty ? kNsPerSec / 2 : 5 * kNsPerSec;
    opt.on_progress = [&](const LoadProgress& p) {
      std::string total = p.total ? fmt::format("/{}", p.total) : "";
      std::string line = fmt::format("[{}{}] {}{} done  {} in flight  {:.1f} tok/s  TTFT p50 {:.1f} ms  errors {}  {:.1f}s",
                                     label, p.warming_up ? " warm-up" : "", p.done, total, p.in_flight,
                                     p.output_tokens_per_s, p.ttft_p50_ms, p.failed, p.elapsed_s);
      if (tty) fmt::print(stderr, "\r\033[K{}", line);
      else fmt::print(stderr, "{}\n", line);
    };
  }
  opt.on_measure_start = hooks.on_measure_start;
  opt.on_measure_end = hooks.on_measure_end;
  opt.stop = &g_stop;
  opt.observer = hooks.observer;
  opt.check_output = check_request_output;

  manifest["tool"] = "inferscope";
  manifest["tool_version"] = kVersion;
  manifest["start_time"] = iso_time_now();
  manifest["mode"] = opt.mode == LoadMode::closed ? "closed" : "open";
  if (opt.mode == LoadMode::closed) manifest["concurrency"] = opt.concurrency;
  else {
    manifest["rate_rps"] = trace_times && !(flags.rate > 0) ? nlohmann::json("trace") : nlohmann::json(opt.rate_rps);
    manifest["arrival"] = std::string(to_string(opt.arrival));
    manifest["burstiness"] = opt.burstiness;
    manifest["max_in_flight"] = opt.max_in_flight;
  }
  manifest["requests"] = opt.requests;
  manifest["duration_s"] = flags.duration_s;
  manifest["warmup"] = opt.warmup;
  manifest["seed"] = opt.seed;
  manifest["virtual_time"] = virtual_time;

  LoadResult result;
  {
    SigintGuard guard;
    result = run_load(target, source, opt);
  }
  if (!flags.quiet && !virtual_time && tty) fmt::print(stderr, "\n");

  RunOutcome out;
  out.interrupted = result.interrupted;
  out.invalid_reasons = check_load_validity(result, flags.max_send_lag_ms);
  // The records move (not copy) into the contiguous form the metrics take: a long run's
  // timelines are most of its memory.
  std::vector<RequestRecord> records(std::make_move_iterator(result.records.begin()),
                                     std::make_move_iterator(result.records.end()));
  result.records.clear();
  out.metrics = compute_run_metrics(records, slos);
  for (const auto& s : out.metrics.slos)
    if (!s.enough_samples)
      out.invalid_reasons.push_back(fmt::format("{}: too few samples to estimate p{}", s.slo.text, s.slo.percentile));
  if (out.metrics.issued > 0 && out.metrics.completed == 0) out.invalid_reasons.push_back("no request completed");
  out.valid = out.invalid_reasons.empty();

  nlohmann::json& j = out.summary;
  j = to_json(out.metrics);
  j["valid"] = out.valid;
  j["invalid_reasons"] = out.invalid_reasons;
  j["interrupted"] = result.interrupted;
  j["client"] = {{"cpu_utilization", result.client_cpu_utilization < 0 ? nlohmann::json(nullptr)
                                                                        : nlohmann::json(result.client_cpu_utilization)},
                 {"loop_lag_p99_ms", result.loop_lag_p99_ms},
                 {"loop_lag_max_ms", result.loop_lag_max_ms}};
  j["output_checks"] = output_check_summary(records);
  if (std::any_of(records.begin(), records.end(), [](const RequestRecord& r) { return r.session_id != 0; }))
    j["sessions"] = workload::session_summary_json(workload::session_timings(records));
  j["manifest"] = std::move(manifest);
  if (hooks.finish_summary) hooks.finish_summary(j);

  if (!flags.out_dir.empty()) {
    std::string lines;
    lines.reserve(records.size() * 512);
    for (const auto& r : records) {
      lines += record_to_json(r, result.origin).dump();
      lines += '\n';
    }
    write_file_atomically(flags.out_dir + "/requests.jsonl", lines);
    if (hooks.write_files) hooks.write_files(flags.out_dir);
    // summary.json last: its presence means the folder is complete.
    write_file_atomically(flags.out_dir + "/summary.json", j.dump(2) + "\n");
  }
  return out;
}

std::string format_summary_table(const RunOutcome& o, const std::string& title) {
  const RunMetrics& m = o.metrics;
  std::string s = fmt::format("{}\n", title);
  s += fmt::format("{:<16}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}\n", "", "mean", "p50", "p90", "p95", "p99", "max");
  auto row = [&](const char* name, const Summary& x) {
    s += fmt::format("{:<16}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}\n", name, fmt_ms(x, x.mean), fmt_ms(x, x.p50),
                     fmt_ms(x, x.p90), fmt_ms(x, x.p95), fmt_ms(x, x.p99), fmt_ms(x, x.max));
  };
  row("TTFT ms", m.all.ttft);
  row("TTFT sched ms", m.all.ttft_sched);
  row("TPOT ms", m.all.tpot);
  row("ITL ms", m.all.itl);
  row("E2E ms", m.all.e2e);
  row("send lag ms", m.all.send_lag);
  s += fmt::format("requests   {} completed, {} failed{} in {:.2f} s\n", m.completed, m.failed,
                   m.warmup ? fmt::format(" (+{} warm-up)", m.warmup) : "", m.duration_s);
  s += fmt::format("throughput {:.1f} output tok/s, {:.1f} total tok/s, {:.2f} req/s", m.output_tokens_per_s,
                   m.total_tokens_per_s, m.requests_per_s);
  if (m.steady_output_tokens_per_s) s += fmt::format(" (steady state {:.1f} output tok/s)", *m.steady_output_tokens_per_s);
  s += "\n";
  if (!m.slos.empty()) {
    s += fmt::format("goodput    {:.2f} req/s ({:.1f}% of requests met every SLO)\n", m.goodput_rps, 100 * m.good_fraction);
    for (const auto& r : m.slos)
      s += fmt::format("  SLO {:<20} observed {:>9.2f} ms  {}{}\n", r.slo.text, r.observed_ms, r.met ? "met" : "MISSED",
                       r.enough_samples ? "" : " (too few samples)");
  }
  if (!m.errors_by_class.empty()) {
    s += "errors    ";
    for (const auto& [k, v] : m.errors_by_class) s += fmt::format(" {} {}", k, v);
    s += "\n";
  }
  if (o.summary.contains("output_checks") && o.summary["output_checks"]["checked"].get<int>() > 0)
    s += fmt::format("output     {}/{} replies passed their schema / tool-call check\n",
                     o.summary["output_checks"]["passed"].get<int>(), o.summary["output_checks"]["checked"].get<int>());
  if (o.summary.contains("sessions")) {
    const auto& ss = o.summary["sessions"];
    s += fmt::format("sessions   {} ({} complete), tool share of session time {}\n", ss.value("sessions", 0),
                     ss.value("ok", 0),
                     ss.contains("tool_share") && ss["tool_share"].is_number()
                         ? fmt::format("{:.1f}%", 100 * ss["tool_share"].get<double>())
                         : std::string("-"));
  }
  for (const auto& w : m.warnings) s += fmt::format("warning    {}\n", w);
  if (o.valid) s += "run        VALID\n";
  else
    for (const auto& r : o.invalid_reasons) s += fmt::format("run        INVALID: {}\n", r);
  return s;
}

}  // namespace inferscope::app
