#include "inferscope/sim/engine.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <queue>
#include <span>
#include <unordered_map>

#include <fmt/format.h>

#include "inferscope/core/errors.h"
#include "inferscope/core/sim_tokenizer.h"
#include "inferscope/sim/kv_cache.h"

namespace inferscope::sim {
namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Content hash of one token's text, 8 bytes at a time (tokens are short words; a general
// byte hash was the simulator's biggest cost). Block hashes mix these again.
std::uint64_t token_hash(std::string_view s) {
  std::uint64_t h = (s.size() + 1) * 0x9e3779b97f4a7c15ULL;
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 31;
  }
  if (i < s.size()) {
    std::uint64_t w = 0;
    std::memcpy(&w, s.data() + i, s.size() - i);
    h = (h ^ w) * 0x94d049bb133111ebULL;
    h ^= h >> 29;
  }
  return h;
}

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

// Content hashes of the prompt's tokens under SimTokenizer's rule: a token is a run of
// non-space bytes with the spaces before it.
void tokenize_hashes(std::string_view text, std::vector<std::uint64_t>& out) {
  std::size_t start = 0, i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    while (i < n && is_space(text[i])) ++i;
    if (i == n) break;
    while (i < n && !is_space(text[i])) ++i;
    out.push_back(token_hash(text.substr(start, i - start)));
    start = i;
  }
}

// Small deterministic generator (splitmix64 stream) for per-request draws.
struct Rng {
  std::uint64_t state;
  double uniform() {  // [0, 1)
    state += 0x9e3779b97f4a7c15ULL;
    return static_cast<double>(mix(state) >> 11) * 0x1.0p-53;
  }
};

Nanos to_ns(double s) { return static_cast<Nanos>(std::llround(s * 1e9)); }
std::int64_t blocks_for(std::int64_t tokens) { return (tokens + kBlockTokens - 1) / kBlockTokens; }

enum class State : std::uint8_t { frontend, waiting, running, draining, done };

struct Req {
  ReqId id = 0;
  State state = State::frontend;
  int replica = -1;
  std::vector<std::uint64_t> tok;         // content hash per token: prompt, then output
  std::vector<std::uint64_t> block_hash;  // chained hash per full block of `tok`
  std::vector<int> blocks;                // KV blocks held
  int prompt_len = 0;
  int max_tokens = 0;
  int target_len = 0;  // output tokens at which it stops
  FinishReason planned = FinishReason::length;
  int generated = 0;
  int computed = 0;       // tokens whose KV is in the cache
  int hashed_blocks = 0;  // leading blocks whose hash is registered
  bool is_long = false;
  bool in_batch = false;
  bool aborted = false;
  int pending_emits = 0;  // emission batches in flight that name this request
  std::uint64_t out_seed = 0;
  Rng rng{0};
  int cached_tokens = -1;
  Nanos t_submit = 0, t_ready = -1, t_sched = -1, t_first_tok = -1, t_last_tok = -1;
  Nanos t_first_emit = -1, t_last_emit = -1;
};

struct BatchItem {
  std::uint32_t slot;
  int q;       // tokens processed
  int drafts;  // speculative draft tokens among them
  bool decode;
};

struct EmitItem {
  std::uint32_t slot;
  int first, n;
  bool finished;
  Nanos t = 0;  // when this chunk leaves the front end
};

struct Replica {
  explicit Replica(std::int64_t blocks, bool prefix) : kv(blocks, prefix) {}
  KvCache kv;
  std::deque<std::uint32_t> waiting, waiting_long;
  std::vector<std::uint32_t> running;
  std::vector<BatchItem> batch;
  bool busy = false;
  Nanos step_start = 0;
  StepRecord rec;
  Nanos last_emit = 0;
  std::size_t num_waiting() const { return waiting.size() + waiting_long.size(); }
};

enum class EvKind : std::uint8_t { ready, step_end, emit };
struct Event {
  Nanos t;
  std::uint64_t seq;
  EvKind kind;
  std::uint32_t arg;
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

}  // namespace

std::string_view to_string(FinishReason r) {
  switch (r) {
    case FinishReason::stop: return "stop";
    case FinishReason::length: return "length";
    case FinishReason::abort: return "abort";
  }
  return "abort";
}

std::string render_chat_prompt(const std::vector<ChatMessage>& messages) {
  std::string out;
  for (const auto& m : messages) {
    out += " <|";
    out += m.role;
    out += "|>";
    if (!m.content.empty() && !is_space(m.content.front())) out += ' ';
    out += m.content;
  }
  out += " <|assistant|>";
  return out;
}

struct Simulator::Impl {
  explicit Impl(EngineConfig c) : cfg(std::move(c)), cost(cfg) {
    validate(cfg);
    blocks_per_replica = cfg.num_gpu_blocks_override > 0 ? cfg.num_gpu_blocks_override : cost.kv_capacity_blocks();
    if (blocks_per_replica < 1)
      throw InputError("--gpu-memory-utilization",
                       fmt::format("{} ({:.1f} GB of weights{}) does not fit on {} × {} at utilisation {}",
                                   cfg.model.name, cost.weight_bytes_resident() / 1e9,
                                   cfg.quantization == Quantization::none ? "" : ", quantised",
                                   cfg.tensor_parallel_size, cfg.gpu.name, cfg.gpu_memory_utilization));
    for (int i = 0; i < cfg.data_parallel_size; ++i) replicas.emplace_back(blocks_per_replica, cfg.enable_prefix_caching);
    for (int i = 0; i < cfg.frontend_workers; ++i) cpu_free.push(0);
    long_cap = cfg.long_prefill_max_tokens > 0 ? cfg.long_prefill_max_tokens
                                               : std::max(1, cfg.max_num_batched_tokens / 4);
  }

  EngineConfig cfg;
  CostModel cost;
  std::int64_t blocks_per_replica = 0;
  int long_cap = 0;
  EngineListener* listener = nullptr;
  Nanos now = 0;
  std::uint64_t next_seq = 0;
  ReqId next_id = 1;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::vector<Req> slots;
  std::vector<std::uint32_t> free_slots;
  std::unordered_map<ReqId, std::uint32_t> by_id;
  std::deque<Replica> replicas;
  std::vector<std::vector<EmitItem>> emit_batches;
  std::vector<std::uint32_t> free_emits;
  std::priority_queue<Nanos, std::vector<Nanos>, std::greater<>> cpu_free;  // per worker
  Nanos cpu_busy_ns = 0;
  EngineMetrics metrics;
  std::vector<StepRecord> steps;

  void push(Nanos t, EvKind k, std::uint32_t arg) { events.push(Event{t, next_seq++, k, arg}); }

  // FCFS on the least busy worker; returns when the job is done.
  Nanos cpu_job(Nanos t, double cost_us) {
    const Nanos c = static_cast<Nanos>(std::llround(cost_us * 1e3));
    const Nanos start = std::max(t, cpu_free.top());
    cpu_free.pop();
    cpu_free.push(start + c);
    cpu_busy_ns += c;
    return start + c;
  }
  Nanos cpu_backlog(Nanos t) const { return std::max<Nanos>(0, cpu_free.top() - t); }

  std::uint64_t seed_of(ReqId id) const { return mix(cfg.seed * 0x100000001b3ULL ^ mix(id)); }

  Req& req(std::uint32_t s) { return slots[s]; }

  ReqId submit(Nanos t, SimRequestSpec spec) {
    std::uint32_t s;
    if (!free_slots.empty()) {
      s = free_slots.back();
      free_slots.pop_back();
      slots[s] = Req{};
    } else {
      s = static_cast<std::uint32_t>(slots.size());
      slots.emplace_back();
    }
    Req& r = slots[s];
    r.id = next_id++;
    r.t_submit = t;
    r.out_seed = seed_of(r.id);
    r.rng = Rng{r.out_seed ^ 0xa5a5a5a5a5a5a5a5ULL};
    if (!spec.prompt.empty()) {
      r.tok.reserve(spec.prompt.size() / 5 + static_cast<std::size_t>(std::max(spec.max_tokens, 0)));
      tokenize_hashes(spec.prompt, r.tok);
    } else {
      for (int i = 0; i < spec.synthetic_prompt_tokens; ++i) r.tok.push_back(mix(r.out_seed + static_cast<std::uint64_t>(i)));
    }
    r.prompt_len = static_cast<int>(r.tok.size());
    r.max_tokens = std::max(spec.max_tokens, 1);
    r.target_len = r.max_tokens;
    r.planned = FinishReason::length;
    if (!spec.ignore_eos && r.rng.uniform() < cfg.early_stop_fraction) {
      const int lo = std::clamp(spec.min_tokens, 1, r.max_tokens);
      r.target_len = lo + static_cast<int>(r.rng.uniform() * (r.max_tokens - lo + 1));
      r.target_len = std::min(r.target_len, r.max_tokens);
      r.planned = FinishReason::stop;
    }
    r.is_long = cfg.long_prefill_threshold > 0 && r.prompt_len >= cfg.long_prefill_threshold;
    by_id.emplace(r.id, s);
    const Nanos done = cpu_job(t, cfg.frontend_request_us + cfg.frontend_token_us * r.prompt_len);
    push(done, EvKind::ready, s);
    return r.id;
  }

  void free_slot(std::uint32_t s) {
    Req& r = slots[s];
    by_id.erase(r.id);
    r.state = State::done;
    r.tok = {};
    r.block_hash = {};
    r.blocks = {};
    free_slots.push_back(s);
  }

  void release_blocks(Replica& rep, Req& r) {
    for (auto it = r.blocks.rbegin(); it != r.blocks.rend(); ++it) rep.kv.release(*it);
    r.blocks.clear();
    r.hashed_blocks = 0;
  }

  // Extends r.block_hash over every full block of the tokens known so far.
  void hash_blocks(Req& r) {
    const std::size_t full = r.tok.size() / kBlockTokens;
    while (r.block_hash.size() < full) {
      const std::size_t b = r.block_hash.size();
      // Chain: the parent block's hash and the block's 16 token hashes (vLLM hashes the
      // parent hash with the block's token ids the same way).
      std::uint64_t h = b == 0 ? 0x243f6a8885a308d3ULL : r.block_hash[b - 1];
      for (std::size_t i = b * kBlockTokens; i < (b + 1) * kBlockTokens; ++i)
        h = (h ^ r.tok[i]) * 0x100000001b3ULL + (h >> 29);
      r.block_hash.push_back(mix(h));
    }
  }

  void register_full_blocks(Replica& rep, Req& r) {
    if (!rep.kv.prefix_caching()) return;
    const int full = r.computed / kBlockTokens;
    if (full <= r.hashed_blocks) return;
    hash_blocks(r);
    for (int b = r.hashed_blocks; b < full; ++b)
      rep.kv.set_hash(r.blocks[static_cast<std::size_t>(b)], r.block_hash[static_cast<std::size_t>(b)]);
    r.hashed_blocks = full;
  }

  void on_ready(std::uint32_t s) {
    Req& r = req(s);
    if (r.aborted) {
      free_slot(s);
      return;
    }
    const int max_len = cfg.effective_max_model_len();
    std::string why;
    if (r.prompt_len < 1)
      why = "the prompt is empty";
    else if (r.prompt_len + r.max_tokens > max_len)
      why = fmt::format("This model's maximum context length is {} tokens. However, you requested {} tokens "
                        "({} in the messages, {} in the completion).",
                        max_len, r.prompt_len + r.max_tokens, r.prompt_len, r.max_tokens);
    else if (blocks_for(r.prompt_len + r.max_tokens + cfg.speculative_k) > blocks_per_replica)
      why = fmt::format("{} tokens need more KV cache than the {} blocks available", r.prompt_len + r.max_tokens,
                        blocks_per_replica);
    if (!why.empty()) {
      const ReqId id = r.id;
      free_slot(s);
      if (listener) listener->on_rejected(id, now, why);
      return;
    }
    // Least-loaded router: fewest running + waiting, lowest index on ties.
    int best = 0;
    std::size_t best_load = SIZE_MAX;
    for (int i = 0; i < static_cast<int>(replicas.size()); ++i) {
      const auto& rep = replicas[static_cast<std::size_t>(i)];
      const std::size_t load = rep.running.size() + rep.num_waiting();
      if (load < best_load) best_load = load, best = i;
    }
    r.replica = best;
    r.t_ready = now;
    r.state = State::waiting;
    Replica& rep = replicas[static_cast<std::size_t>(best)];
    (r.is_long ? rep.waiting_long : rep.waiting).push_back(s);
    if (listener) listener->on_accepted(r.id, now);
    if (!rep.busy) start_step(best);
  }

  void preempt(Replica& rep, std::uint32_t s) {
    Req& r = req(s);
    release_blocks(rep, r);
    r.computed = 0;
    r.state = State::waiting;
    rep.running.erase(std::find(rep.running.begin(), rep.running.end(), s));
    (r.is_long ? rep.waiting_long : rep.waiting).push_front(s);
    ++metrics.preemptions;
    ++rep.rec.preempted;
  }

  bool allocate(Replica& rep, Req& r, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) {
      const int b = rep.kv.allocate();
      if (b < 0) return false;
      r.blocks.push_back(b);
    }
    return true;
  }

  // Tries to admit the request at the front of `queue`; false stops admission this step.
  bool admit(Replica& rep, std::deque<std::uint32_t>& queue, int& budget, StepShape& shape) {
    const std::uint32_t s = queue.front();
    Req& r = req(s);
    const int total = static_cast<int>(r.tok.size());
    KvCache::Match hit;
    if (rep.kv.prefix_caching()) {
      hash_blocks(r);
      // At least one token is always computed, to produce the next token's logits.
      const std::size_t usable = std::min<std::size_t>(r.block_hash.size(), static_cast<std::size_t>((total - 1) / kBlockTokens));
      hit = rep.kv.match(std::span(r.block_hash).first(usable));
    }
    const int start = hit.blocks * kBlockTokens;
    int n = std::min(total - start, budget);
    if (r.is_long) n = std::min(n, long_cap);
    if (n < total - start && !cfg.enable_chunked_prefill) return false;
    const std::int64_t fresh = blocks_for(start + n) - hit.blocks;
    if (rep.kv.free_blocks() < hit.unreferenced + fresh) return false;
    for (int b = 0; b < hit.blocks; ++b) r.blocks.push_back(rep.kv.acquire_cached(r.block_hash[static_cast<std::size_t>(b)]));
    [[maybe_unused]] const bool ok = allocate(rep, r, fresh);
    assert(ok);
    r.computed = start;
    r.hashed_blocks = hit.blocks;
    if (rep.kv.prefix_caching()) {
      metrics.prefix_cache_queries += static_cast<std::uint64_t>(total);
      metrics.prefix_cache_hits += static_cast<std::uint64_t>(start);
    }
    queue.pop_front();
    rep.running.push_back(s);
    r.state = State::running;
    r.in_batch = true;
    rep.batch.push_back(BatchItem{s, n, 0, false});
    budget -= n;
    shape.add(n, start);
    rep.rec.prefill_tokens += n;
    if (r.t_sched < 0) {
      r.t_sched = now;
      r.cached_tokens = start;
      if (listener) listener->on_scheduled(r.id, now, start);
    }
    return true;
  }

  void start_step(int ri) {
    Replica& rep = replicas[static_cast<std::size_t>(ri)];
    rep.batch.clear();
    rep.rec = StepRecord{};
    rep.rec.replica = ri;
    rep.rec.t_start = now;
    rep.rec.frontend_backlog_ms = ns_to_ms(cpu_backlog(now));
    int budget = cfg.max_num_batched_tokens;
    StepShape shape;
    int spec_seqs = 0;
    // 1. Running requests first, in the order they were admitted.
    for (std::size_t i = 0; i < rep.running.size() && budget > 0; ++i) {
      const std::uint32_t s = rep.running[i];
      Req& r = req(s);
      const int total = static_cast<int>(r.tok.size());
      const bool decode = r.generated > 0 && r.computed == total - 1;
      int n = decode ? 1 + cfg.speculative_k : total - r.computed;
      if (!decode && r.is_long) n = std::min(n, long_cap);
      n = std::min(n, budget);
      const std::int64_t need = blocks_for(r.computed + n) - static_cast<std::int64_t>(r.blocks.size());
      bool self_preempted = false;
      while (need > rep.kv.free_blocks()) {
        // Recompute preemption: the newest running request gives its blocks back.
        const std::uint32_t victim = rep.running.back();
        preempt(rep, victim);
        if (victim == s) {
          self_preempted = true;
          break;
        }
      }
      if (self_preempted) break;
      if (need > 0) {
        [[maybe_unused]] const bool ok = allocate(rep, r, need);
        assert(ok);
      }
      r.in_batch = true;
      rep.batch.push_back(BatchItem{s, n, decode ? n - 1 : 0, decode});
      budget -= n;
      shape.add(n, r.computed);
      (decode ? rep.rec.decode_tokens : rep.rec.prefill_tokens) += n;
      if (decode && n > 1) ++spec_seqs;
    }
    // 2. Waiting requests in FCFS order (short queue first), unless this step preempted.
    if (rep.rec.preempted == 0) {
      while (!rep.waiting.empty() && static_cast<int>(rep.running.size()) < cfg.max_num_seqs && budget > 0)
        if (!admit(rep, rep.waiting, budget, shape)) break;
      const bool long_in_prefill = std::any_of(rep.running.begin(), rep.running.end(), [&](std::uint32_t s) {
        const Req& r = slots[s];
        return r.is_long && r.generated == 0;
      });
      if (!long_in_prefill && !rep.waiting_long.empty() &&
          static_cast<int>(rep.running.size()) < cfg.max_num_seqs && budget > 0)
        admit(rep, rep.waiting_long, budget, shape);
    }
    if (rep.batch.empty()) {
      rep.busy = false;
      return;
    }
    const StepTime st = cost.step_time(shape, spec_seqs);
    rep.rec.running = static_cast<int>(rep.running.size());
    rep.rec.waiting = static_cast<int>(rep.num_waiting());
    rep.rec.kv_usage = rep.kv.usage();
    rep.rec.num_seqs = static_cast<int>(rep.batch.size());
    rep.rec.batch_tokens = static_cast<int>(shape.tokens);
    rep.rec.compute_ms = st.compute_s * 1e3;
    rep.rec.memory_ms = st.memory_s * 1e3;
    rep.rec.comm_ms = st.comm_s * 1e3;
    rep.rec.overhead_ms = (st.overhead_s + st.draft_s) * 1e3;
    rep.busy = true;
    rep.step_start = now;
    push(now + std::max<Nanos>(1, to_ns(st.total_s)), EvKind::step_end, static_cast<std::uint32_t>(ri));
  }

  void append_output(Req& r, int n) {
    for (int i = 0; i < n; ++i)
      r.tok.push_back(token_hash(SimTokenizer::filler_token(r.out_seed, static_cast<std::uint64_t>(r.generated + i))));
    r.generated += n;
  }

  void finish_in_engine(Req& r) {
    r.state = State::draining;
    r.t_last_tok = now;
    metrics.queue_time.observe(ns_to_s(r.t_sched - r.t_ready));
    metrics.prefill_time.observe(ns_to_s(r.t_first_tok - r.t_sched));
    metrics.decode_time.observe(ns_to_s(r.t_last_tok - r.t_first_tok));
    metrics.inference_time.observe(ns_to_s(r.t_last_tok - r.t_sched));
    metrics.prompt_len.observe(r.prompt_len);
    metrics.generation_len.observe(r.generated);
  }

  void on_step_end(int ri) {
    Replica& rep = replicas[static_cast<std::size_t>(ri)];
    std::vector<EmitItem> out;
    bool any_finished = false;
    for (const BatchItem& it : rep.batch) {
      Req& r = req(it.slot);
      r.in_batch = false;
      if (r.aborted) {
        release_blocks(rep, r);
        rep.running.erase(std::find(rep.running.begin(), rep.running.end(), it.slot));
        if (r.pending_emits == 0) free_slot(it.slot);
        continue;
      }
      int produced = 0;
      if (it.decode) {
        int accepted = 0;
        if (it.drafts > 0) {
          while (accepted < it.drafts && r.rng.uniform() < cfg.speculative_alpha) ++accepted;
          ++metrics.spec_drafts;
          metrics.spec_draft_tokens += static_cast<std::uint64_t>(it.drafts);
          metrics.spec_accepted_tokens += static_cast<std::uint64_t>(accepted);
        }
        produced = std::min(1 + accepted, r.target_len - r.generated);
        append_output(r, produced);
        r.computed += produced;
      } else {
        r.computed += it.q;
        if (r.computed == static_cast<int>(r.tok.size())) {
          produced = 1;
          append_output(r, 1);
        }
      }
      register_full_blocks(rep, r);
      if (produced == 0) continue;
      const int first = r.generated - produced;
      if (r.t_first_tok < 0) {
        r.t_first_tok = now;
        metrics.prompt_tokens += static_cast<std::uint64_t>(r.prompt_len);
      }
      metrics.generation_tokens += static_cast<std::uint64_t>(produced);
      const bool done = r.generated >= r.target_len;
      if (done) {
        finish_in_engine(r);
        release_blocks(rep, r);
        any_finished = true;
      }
      ++r.pending_emits;
      out.push_back(EmitItem{it.slot, first, produced, done, 0});
    }
    if (any_finished)
      std::erase_if(rep.running, [&](std::uint32_t s) { return slots[s].state == State::draining; });
    rep.rec.t_end = now;
    if (cfg.record_steps) steps.push_back(rep.rec);
    if (!out.empty()) {
      // The front end turns the step's outputs into stream chunks one after another (as
      // vLLM's API server serialises each request's chunk in turn): chunk i leaves
      // frontend_step_us + (i + 1) · frontend_chunk_us after the job starts.
      Nanos done = cpu_job(now, cfg.frontend_step_us + cfg.frontend_chunk_us * static_cast<double>(out.size()));
      done = std::max(done, rep.last_emit);
      rep.last_emit = done;
      const auto chunk_ns = static_cast<Nanos>(std::llround(cfg.frontend_chunk_us * 1e3));
      for (std::size_t i = 0; i < out.size(); ++i)
        out[i].t = done - static_cast<Nanos>(out.size() - 1 - i) * chunk_ns;
      const Nanos first_leaves = out.front().t;
      std::uint32_t e;
      if (!free_emits.empty()) {
        e = free_emits.back();
        free_emits.pop_back();
        emit_batches[e] = std::move(out);
      } else {
        e = static_cast<std::uint32_t>(emit_batches.size());
        emit_batches.push_back(std::move(out));
      }
      push(first_leaves, EvKind::emit, e);
    }
    rep.busy = false;
    if (!rep.running.empty() || rep.num_waiting() > 0) start_step(ri);
  }

  void on_emit(std::uint32_t e) {
    std::vector<EmitItem> items = std::move(emit_batches[e]);
    emit_batches[e].clear();
    free_emits.push_back(e);
    for (const EmitItem& it : items) {
      Req& r = req(it.slot);
      --r.pending_emits;
      if (r.aborted) {
        if (r.pending_emits == 0 && !r.in_batch && r.state != State::done) free_slot(it.slot);
        continue;
      }
      // The event fires when the batch's first chunk leaves; each later chunk carries its
      // own (later) time, so listeners see the front end's serial order.
      const Nanos t = it.t;
      if (r.t_first_emit < 0) {
        r.t_first_emit = t;
        metrics.ttft.observe(ns_to_s(t - r.t_submit));
      } else {
        metrics.itl.observe(ns_to_s(t - r.t_last_emit));
      }
      r.t_last_emit = t;
      const ReqId id = r.id;
      if (listener) listener->on_tokens(id, t, it.first, it.n, it.finished);
      if (it.finished) {
        metrics.e2e.observe(ns_to_s(t - r.t_submit));
        (r.planned == FinishReason::stop ? metrics.success_stop : metrics.success_length)++;
        const FinishInfo info{r.planned, r.prompt_len, r.generated, std::max(r.cached_tokens, 0)};
        free_slot(it.slot);
        if (listener) listener->on_finished(id, t, info);
      }
    }
  }

  void abort(ReqId id) {
    const auto it = by_id.find(id);
    if (it == by_id.end()) return;
    const std::uint32_t s = it->second;
    Req& r = req(s);
    r.aborted = true;
    by_id.erase(it);  // gone for callers; the slot lives until no step or emission names it
    ++metrics.success_abort;
    switch (r.state) {
      case State::frontend: return;  // freed when its ready event fires
      case State::waiting: {
        Replica& rep = replicas[static_cast<std::size_t>(r.replica)];
        auto& q = r.is_long ? rep.waiting_long : rep.waiting;
        q.erase(std::find(q.begin(), q.end(), s));
        release_blocks(rep, r);
        break;
      }
      case State::running: {
        if (r.in_batch) return;  // released at step end
        Replica& rep = replicas[static_cast<std::size_t>(r.replica)];
        release_blocks(rep, r);
        rep.running.erase(std::find(rep.running.begin(), rep.running.end(), s));
        break;
      }
      case State::draining:
      case State::done: break;
    }
    if (r.pending_emits == 0) free_slot(s);
  }

  void run_until(Nanos t) {
    while (!events.empty() && events.top().t <= t) {
      const Event ev = events.top();
      events.pop();
      now = std::max(now, ev.t);
      switch (ev.kind) {
        case EvKind::ready: on_ready(ev.arg); break;
        case EvKind::step_end: on_step_end(static_cast<int>(ev.arg)); break;
        case EvKind::emit: on_emit(ev.arg); break;
      }
    }
    now = std::max(now, t);
  }

  EngineGauges gauges() const {
    EngineGauges g;
    double usage = 0;
    for (const auto& rep : replicas) {
      g.running += static_cast<int>(rep.running.size());
      g.waiting += static_cast<int>(rep.num_waiting());
      usage += rep.kv.usage();
    }
    g.kv_usage = usage / static_cast<double>(replicas.size());
    return g;
  }
};

Simulator::Simulator(EngineConfig cfg) : impl_(std::make_unique<Impl>(std::move(cfg))) {}
Simulator::~Simulator() = default;
void Simulator::set_listener(EngineListener* l) { impl_->listener = l; }
ReqId Simulator::submit(Nanos t, SimRequestSpec spec) {
  impl_->now = std::max(impl_->now, t);
  return impl_->submit(impl_->now, std::move(spec));
}
void Simulator::abort(ReqId id, Nanos t) {
  impl_->now = std::max(impl_->now, t);
  impl_->abort(id);
}
std::optional<Nanos> Simulator::next_event_time() const {
  if (impl_->events.empty()) return std::nullopt;
  return impl_->events.top().t;
}
void Simulator::run_until(Nanos t) { impl_->run_until(t); }
Nanos Simulator::now() const { return impl_->now; }
std::size_t Simulator::active() const { return impl_->by_id.size(); }
const EngineConfig& Simulator::config() const { return impl_->cfg; }
const CostModel& Simulator::cost() const { return impl_->cost; }
std::int64_t Simulator::kv_blocks_per_replica() const { return impl_->blocks_per_replica; }
const EngineMetrics& Simulator::metrics() const { return impl_->metrics; }
EngineGauges Simulator::gauges() const { return impl_->gauges(); }
double Simulator::frontend_busy_s() const { return ns_to_s(impl_->cpu_busy_ns); }
const std::vector<StepRecord>& Simulator::steps() const { return impl_->steps; }
std::string Simulator::render_metrics() const {
  return render_prometheus(impl_->metrics, impl_->gauges(), impl_->cfg.model_name());
}
std::uint64_t Simulator::output_seed(ReqId id) const { return impl_->seed_of(id); }
std::string Simulator::output_text(ReqId id, int first_index, int n) const {
  const std::uint64_t seed = output_seed(id);
  std::string out;
  for (int i = 0; i < n; ++i) out += SimTokenizer::filler_token(seed, static_cast<std::uint64_t>(first_index + i));
  return out;
}

}  // namespace inferscope::sim
