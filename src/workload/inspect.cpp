// `workload inspect`: traffic statistics of a trace or a synthetic spec.
#include <algorithm>
#include <map>
#include <unordered_set>

#include "inferscope/stats/summary.h"
#include "inferscope/workload/workload.h"

#include <cmath>

namespace inferscope::workload {
namespace {

constexpr int kBlock = 16;  // vLLM's default KV block size: the granularity a prefix cache hits at

// Counts full kBlock-token blocks of `ids` whose chained hash was seen before (infinite
// cache), and records them.
struct BlockCounter {
  std::unordered_set<std::uint64_t> seen;
  std::uint64_t total = 0, hits = 0;
  void add(const std::vector<TokenId>& ids) {
    std::uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (std::size_t b = 0; b + kBlock <= ids.size(); b += kBlock) {
      for (std::size_t i = b; i < b + kBlock; ++i) h = mix64(h ^ static_cast<std::uint32_t>(ids[i]));
      ++total;
      if (!seen.insert(h).second) ++hits;
    }
  }
};

void append(std::vector<TokenId>& v, const std::vector<TokenId>& w) { v.insert(v.end(), w.begin(), w.end()); }

// Replies are unknown before a run: each stands in as max_tokens ids no prompt can contain.
void append_reply(std::vector<TokenId>& v, int n, std::uint64_t& fresh) {
  for (int i = 0; i < n; ++i) v.push_back(static_cast<TokenId>(-1 - static_cast<std::int64_t>(fresh++ % 0x7fffffff)));
}

void add_arrivals(WorkloadStats& s, std::vector<Nanos> t) {
  if (t.empty()) return;
  std::sort(t.begin(), t.end());
  const double dur = ns_to_s(t.back() - t.front());
  s.duration_s = dur;
  s.rate_rps = dur > 0 ? static_cast<double>(s.count) / dur : 0.0;
  std::map<std::int64_t, std::int64_t> per_min;
  for (Nanos x : t) ++per_min[(x - t.front()) / (60 * kNsPerSec)];
  std::int64_t peak = 0;
  for (const auto& [m, n] : per_min) peak = std::max(peak, n);
  s.peak_rate_rpm = static_cast<double>(peak);
}

}  // namespace

WorkloadStats inspect(const WorkloadConfig& cfg, const Tokenizer& tok, std::uint64_t seed,
                      std::int64_t synthetic_count) {
  WorkloadStats s;
  s.block_tokens = kBlock;
  const Trace* tr = cfg.trace_data.get();
  if (tr) {
    const bool has_hash = std::any_of(tr->requests.begin(), tr->requests.end(), [](auto& r) { return !r.hash_ids.empty(); });
    const bool has_text_or_sessions = std::any_of(tr->requests.begin(), tr->requests.end(),
                                                  [](auto& r) { return !r.prompt.empty() || !r.session.empty(); });
    std::vector<Nanos> arrivals;
    std::unordered_set<std::uint64_t> seen;
    std::uint64_t blocks = 0, hits = 0;
    std::size_t n = tr->requests.size();
    if (cfg.count >= 0) n = std::min(n, static_cast<std::size_t>(cfg.count));
    for (std::size_t i = 0; i < n; ++i) {
      const auto& r = tr->requests[i];
      ++s.count;
      if (r.t_ns && cfg.trace->timestamps) arrivals.push_back(*r.t_ns);
      s.input_tokens.push_back(static_cast<double>(r.input_tokens >= 0 ? r.input_tokens : tok.count(r.prompt)));
      if (r.output_tokens > 0) s.output_tokens.push_back(static_cast<double>(r.output_tokens));
      else if (!r.reply.empty()) s.output_tokens.push_back(tok.count(r.reply));
      for (auto h : r.hash_ids) {
        ++blocks;
        if (!seen.insert(h).second) ++hits;
      }
    }
    add_arrivals(s, std::move(arrivals));
    if (has_hash) {
      s.block_tokens = tr->block_tokens;
      s.prefix_reuse_fraction = blocks ? static_cast<double>(hits) / static_cast<double>(blocks) : 0.0;
      return s;
    }
    // Synthesised prompts start with a unique marker: no reuse unless text or sessions repeat.
    if (!has_text_or_sessions) return s;
  }
  // Build what would be sent and count reused blocks.
  auto src = make_session_source(cfg, seed, tok);
  const std::int64_t limit = tr ? -1 : (cfg.count >= 0 ? cfg.count : synthetic_count);
  BlockCounter bc;
  std::uint64_t fresh = 0;
  WorkloadStats gen;
  for (std::int64_t i = 0; limit < 0 || i < limit; ++i) {
    auto plan = src->next();
    if (!plan) break;
    std::vector<TokenId> history;
    for (const auto& turn : plan->turns) {
      ++gen.count;
      gen.input_tokens.push_back(turn.req.input_tokens);
      gen.output_tokens.push_back(turn.req.max_tokens);
      if (!turn.tool_result.empty()) append(history, tok.encode(turn.tool_result));
      append(history, tok.encode(turn.req.prompt));
      bc.add(history);
      append_reply(history, turn.req.max_tokens, fresh);
    }
  }
  s.prefix_reuse_fraction = bc.total ? static_cast<double>(bc.hits) / static_cast<double>(bc.total) : 0.0;
  if (!tr) {
    s.count = gen.count;
    s.input_tokens = std::move(gen.input_tokens);
    s.output_tokens = std::move(gen.output_tokens);
  }
  return s;
}

std::vector<std::int64_t> input_matrix_points(const WorkloadStats& s, std::int64_t model_max) {
  const Summary in = summarize(s.input_tokens);
  return matrix_points(in.count ? static_cast<std::int64_t>(std::llround(in.p95)) : 0, model_max);
}

nlohmann::json to_json(const WorkloadStats& s) {
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  // `inspect --json` promises {count, mean, p50, p90, p95, p99, max}: the run summary's
  // statistics less the ones a traffic description does not need.
  auto stats = [](const std::vector<double>& v) {
    nlohmann::json j = inferscope::to_json(summarize(v));
    for (const char* k : {"std", "min", "p999"}) j.erase(k);
    return j;
  };
  return {{"count", s.count},
          {"duration_s", opt(s.duration_s)},
          {"rate_rps", opt(s.rate_rps)},
          {"peak_rate_rpm", opt(s.peak_rate_rpm)},
          {"input_tokens", stats(s.input_tokens)},
          {"output_tokens", stats(s.output_tokens)},
          {"prefix_reuse_fraction", s.prefix_reuse_fraction},
          {"prefix_block_tokens", s.block_tokens}};
}

}  // namespace inferscope::workload
