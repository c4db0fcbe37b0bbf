// `inferscope scrape URL|FILE [--engine E] [--json]`: one metrics page, normalised.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "command.h"
#include "inferscope/core/errors.h"
#include "inferscope/telemetry/engine_map.h"
#include "inferscope/telemetry/sampler.h"

namespace inferscope::app {
namespace {

using namespace inferscope::telemetry;

// A bare http(s)://host[:port] gets the engine's metrics path; anything with a path is
// used as given.
std::string resolve(const std::string& where, Engine engine) {
  const auto scheme = where.find("://");
  if (scheme == std::string::npos || !(where.starts_with("http://") || where.starts_with("https://"))) return where;
  const auto slash = where.find('/', scheme + 3);
  if (slash == std::string::npos || slash + 1 == where.size()) return default_metrics_url(where, engine);
  return where;
}

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

struct ScrapeCommand {
  std::string where;
  std::string engine_flag = "auto";
  bool json = false;
  double timeout_s = 10.0;

  void run() {
    const Engine forced = parse_engine(engine_flag);
    const std::string source = resolve(where, forced);
    const FetchResult page = fetch_url_or_file(source, timeout_s);
    if (!page.ok) {
      // A file the user named is input; an engine that does not answer is a runtime failure.
      if (!source.starts_with("http")) throw InputError(source, page.error);
      fmt::print(stderr, "inferscope: scrape: {}: {}\n", source, page.error);
      set_exit_code(1);
      return;
    }
    const auto parsed = parse_prometheus(page.body);
    if (!parsed) throw InputError(source, parsed.error().line, "", parsed.error().message);
    const NormalizedScrape n = normalize(*parsed, forced);

    nlohmann::ordered_json out;
    out["source"] = source;
    out["engine"] = std::string(engine_name(n.engine));
    out["detected"] = n.detected;
    nlohmann::ordered_json values = nlohmann::ordered_json::object();
    nlohmann::ordered_json hists = nlohmann::ordered_json::object();
    std::vector<std::string> missing;
    for (const auto key : scalar_keys()) {
      const std::string k(key);
      if (auto it = n.values.find(k); it != n.values.end())
        values[k] = {{"value", number_or_null(it->second)}, {"metric", n.sources.at(k)}};
      else
        missing.push_back(k);
    }
    for (const auto key : histogram_keys()) {
      const std::string k(key);
      const auto it = n.histograms.find(k);
      if (it == n.histograms.end()) {
        missing.push_back(k);
        continue;
      }
      const auto& h = it->second;
      hists[k] = {{"count", h.count},
                  {"sum", number_or_null(h.sum)},
                  {"p50", number_or_null(histogram_quantile(0.50, h.buckets))},
                  {"p95", number_or_null(histogram_quantile(0.95, h.buckets))},
                  {"p99", number_or_null(histogram_quantile(0.99, h.buckets))},
                  {"metric", n.sources.at(k)}};
    }
    out["values"] = values;
    out["histograms"] = hists;
    out["not_exposed"] = missing;
    out["notes"] = n.notes;
    if (json) {
      fmt::print("{}\n", out.dump(2));
      return;
    }

    fmt::print("engine  {}{}\nsource  {}\n\n", engine_name(n.engine), n.detected ? " (detected)" : " (--engine)",
               source);
    for (const auto& [k, v] : values.items())
      fmt::print("  {:<18} {:>14}   {}\n", k,
                 v["value"].is_null() ? std::string("NaN") : fmt::format("{:.6g}", v["value"].get<double>()),
                 v["metric"].get<std::string>());
    const auto fmt_s = [](const nlohmann::ordered_json& x) {
      return x.is_null() ? std::string("-") : fmt::format("{:.4g}s", x.get<double>());
    };
    for (const auto& [k, h] : hists.items())
      fmt::print("  {:<18} count {:<8.0f} sum {:<10} p50 {:<9} p95 {:<9} p99 {:<9}  {}\n", k, h["count"].get<double>(),
                 h["sum"].is_null() ? std::string("-") : fmt::format("{:.4g}", h["sum"].get<double>()), fmt_s(h["p50"]),
                 fmt_s(h["p95"]), fmt_s(h["p99"]), h["metric"].get<std::string>());
    if (!missing.empty()) {
      std::string list;
      for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
      fmt::print("\n  not exposed: {}\n", list);
    }
    for (const auto& note : n.notes) fmt::print("  note: {}\n", note);
  }
};

void register_scrape(CLI::App& root) {
  static ScrapeCommand cmd;
  auto* sub = root.add_subcommand("scrape", "Scrape one engine metrics page (URL or file) and print it normalised");
  sub->add_option("source", cmd.where,
                  "metrics URL (a bare http://host:port gets /metrics, or /prometheus/metrics with --engine "
                  "trtllm) or a file holding a saved page")
      ->required();
  sub->add_option("--engine", cmd.engine_flag, "auto (detect from names), vllm, sglang, tgi, llamacpp, trtllm, sim")
      ->capture_default_str();
  sub->add_flag("--json", cmd.json, "print JSON instead of a table");
  sub->add_option("--timeout", cmd.timeout_s, "HTTP timeout in seconds")->capture_default_str();
  sub->callback([] { cmd.run(); });
}

const CommandRegistration reg{40, &register_scrape};

}  // namespace
}  // namespace inferscope::app
