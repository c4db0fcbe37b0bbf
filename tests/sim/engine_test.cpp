// Scheduler, KV cache, prefix caching, preemption, speculative decoding and the front end,
// each against a trace worked out by hand.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "inferscope/core/errors.h"
#include "inferscope/core/sim_tokenizer.h"
#include "inferscope/sim/engine.h"
#include "sim_test_util.h"

namespace inferscope::sim {
namespace {
using testing::make_config;

struct Outcome {
  Nanos t_accepted = -1, t_sched = -1, t_first = -1, t_done = -1;
  int cached = -1, tokens = 0, chunks = 0;
  FinishInfo info;
  std::string rejected;
  bool finished = false;
  bool saw_last = false;
};

class Recorder : public EngineListener {
 public:
  std::map<ReqId, Outcome> out;
  void on_accepted(ReqId id, Nanos t) override { out[id].t_accepted = t; }
  void on_rejected(ReqId id, Nanos, const std::string& m) override { out[id].rejected = m; }
  void on_scheduled(ReqId id, Nanos t, int cached) override {
    out[id].t_sched = t;
    out[id].cached = cached;
  }
  void on_tokens(ReqId id, Nanos t, int first, int n, bool last) override {
    auto& o = out[id];
    EXPECT_FALSE(o.saw_last);
    o.saw_last = last;
    EXPECT_EQ(first, o.tokens);  // tokens arrive in order, none skipped
    if (o.t_first < 0) o.t_first = t;
    o.tokens += n;
    ++o.chunks;
  }
  void on_finished(ReqId id, Nanos t, const FinishInfo& info) override {
    EXPECT_TRUE(out[id].saw_last);  // the final tokens were flagged
    out[id].t_done = t;
    out[id].info = info;
    out[id].finished = true;
  }
};

// Runs to quiescence (bounded).
void drain(Simulator& sim) {
  for (int i = 0; i < 10'000'000; ++i) {
    const auto t = sim.next_event_time();
    if (!t) return;
    sim.run_until(*t);
  }
  FAIL() << "simulation did not settle";
}

std::string words(int n, int offset = 0) {
  std::string s;
  for (int i = 0; i < n; ++i) s += " w" + std::to_string(i + offset);
  return s;
}

TEST(Engine, OneRequestsTimeToFirstTokenIsFrontEndPlusPrefillStep) {
  auto cfg = make_config("H100-SXM");
  cfg.mfu = 0.6;
  Simulator sim(cfg);
  Recorder rec;
  sim.set_listener(&rec);
  const ReqId id = sim.submit(0, SimRequestSpec{words(1024), 0, 1, true, 0});
  drain(sim);
  const auto& o = rec.out[id];
  // Front end: 300 µs + 0.05 µs · 1024 = 351.2 µs → accepted and scheduled then.
  EXPECT_EQ(o.t_accepted, 351'200);
  EXPECT_EQ(o.t_sched, 351'200);
  // Prefill step: 26.3534 ms compute (15.644e12 FLOP / 593.64e12 FLOP/s) + 0.304 ms
  // overhead; then the front end spends 50 + 15 µs on the output chunk.
  const double ttft_ms = ns_to_ms(o.t_first);
  EXPECT_NEAR(ttft_ms, 0.3512 + 26.3534 + 0.304 + 0.065, 0.001);
  EXPECT_EQ(o.tokens, 1);
  EXPECT_EQ(o.info.reason, FinishReason::length);
  EXPECT_EQ(o.info.prompt_tokens, 1024);
  EXPECT_EQ(sim.active(), 0u);
}

TEST(Engine, TokenBudgetChunksALongPrefill) {
  auto cfg = make_config();
  cfg.max_num_batched_tokens = 512;
  Simulator sim(cfg);
  Recorder rec;
  sim.set_listener(&rec);
  sim.submit(0, SimRequestSpec{"", 2000, 3, true, 0});
  drain(sim);
  // 2000 = 512 + 512 + 512 + 464, then two decode steps of one token.
  std::vector<int> prefill, decode;
  for (const auto& s : sim.steps()) {
    prefill.push_back(s.prefill_tokens);
    decode.push_back(s.decode_tokens);
  }
  EXPECT_EQ(prefill, (std::vector<int>{512, 512, 512, 464, 0, 0}));
  EXPECT_EQ(decode, (std::vector<int>{0, 0, 0, 0, 1, 1}));
}

TEST(Engine, RunningDecodesGoFirstAndPrefillTakesTheRest) {
  auto cfg = make_config();
  cfg.max_num_batched_tokens = 512;
  Simulator sim(cfg);
  sim.submit(0, SimRequestSpec{"", 100, 50, true, 0});
  sim.run_until(ms_to_ns(40));  // A is decoding by now
  sim.submit(sim.now(), SimRequestSpec{"", 2000, 2, true, 0});
  drain(sim);
  bool saw_mixed = false;
  for (const auto& s : sim.steps()) {
    EXPECT_LE(s.batch_tokens, 512);
    if (s.decode_tokens == 1 && s.prefill_tokens == 511) saw_mixed = true;
  }
  EXPECT_TRUE(saw_mixed) << "A's decode token first, then 511 of B's prompt";
}

TEST(Engine, MaxNumSeqsCapsTheBatch) {
  auto cfg = make_config();
  cfg.max_num_seqs = 2;
  Simulator sim(cfg);
  for (int i = 0; i < 4; ++i) sim.submit(0, SimRequestSpec{"", 32, 4, true, 0});
  drain(sim);
  int max_running = 0;
  for (const auto& s : sim.steps()) max_running = std::max(max_running, s.running);
  EXPECT_EQ(max_running, 2);
  // The first step ran the first two; the two others waited.
  const auto& first = sim.steps().front();
  EXPECT_EQ(first.num_seqs, 1);  // the front end hands them over 300 µs apart
  EXPECT_EQ(sim.metrics().e2e.count(), 4u);
}

TEST(Engine, LongQueueKeepsShortPromptsMoving) {
  auto cfg = make_config();
  cfg.long_prefill_threshold = 4000;  // prompts of 4000+ tokens are "long"
  cfg.frontend_request_us = 0;
  cfg.frontend_token_us = 0;
  Simulator sim(cfg);
  Recorder rec;
  sim.set_listener(&rec);
  const ReqId big = sim.submit(0, SimRequestSpec{"", 6000, 2, true, 0});
  const ReqId small = sim.submit(0, SimRequestSpec{"", 100, 2, true, 0});
  drain(sim);
  // Long prefills take at most 8192 / 4 = 2048 tokens a step, so the 6000-token prompt
  // needs 3 steps (2048, 2048, 1904) and the short one, admitted in step 2 from the short
  // queue, gets its first token long before.
  std::vector<int> prefill;
  for (const auto& s : sim.steps()) prefill.push_back(s.prefill_tokens);
  ASSERT_GE(prefill.size(), 3u);
  EXPECT_EQ(prefill[0], 2048);
  EXPECT_EQ(prefill[1], 2048 + 100);
  EXPECT_EQ(prefill[2], 1904);
  EXPECT_LT(rec.out[small].t_first, rec.out[big].t_first);
  // One queue, full budget: the 6000-token prompt fills the first step whole, and the
  // short one (handed over just after that step started) waits all of it.
  cfg.long_prefill_threshold = 0;
  Simulator fcfs(cfg);
  Recorder rec2;
  fcfs.set_listener(&rec2);
  fcfs.submit(0, SimRequestSpec{"", 6000, 2, true, 0});
  fcfs.submit(0, SimRequestSpec{"", 100, 2, true, 0});
  drain(fcfs);
  EXPECT_EQ(fcfs.steps()[0].prefill_tokens, 6000);
  EXPECT_EQ(fcfs.steps()[1].prefill_tokens, 100);
  EXPECT_GT(rec2.out[2].t_first, rec2.out[1].t_first);
  EXPECT_GT(rec2.out[2].t_first, rec.out[small].t_first);
}

TEST(Engine, NoChunkedPrefillRunsAPromptInOneStep) {
  auto cfg = make_config();
  cfg.enable_chunked_prefill = false;
  cfg.max_num_batched_tokens = 8192;
  Simulator sim(cfg);
  sim.submit(0, SimRequestSpec{"", 3000, 1, true, 0});
  drain(sim);
  ASSERT_EQ(sim.steps().size(), 1u);
  EXPECT_EQ(sim.steps()[0].prefill_tokens, 3000);
}

TEST(Engine, PreemptsTheNewestRequestWhenBlocksRunOutAndRecomputes) {
  auto cfg = make_config();
  cfg.num_gpu_blocks_override = 10;  // 160 tokens
  cfg.frontend_request_us = 0;       // both arrive at t = 0: A, then B
  cfg.frontend_token_us = 0;
  Simulator sim(cfg);
  Recorder rec;
  sim.set_listener(&rec);
  const ReqId a = sim.submit(0, SimRequestSpec{words(64, 0), 0, 64, true, 0});
  const ReqId b = sim.submit(0, SimRequestSpec{words(64, 100), 0, 64, true, 0});
  drain(sim);
  // Step 1 admits A alone (B's hand-over is processed after A's step started); B joins
  // at step 2, one token behind A. Each holds 4 blocks for its 64-token prompt and one
  // more per 16 tokens, so at 80 tokens (5 blocks each) all 10 are used. When A needs its
  // 6th block, the newest running request, B, is preempted: its unhashed partial 5th
  // block goes to the front of the free queue and its 4 hashed prompt blocks to the back
  // last-first, so A takes the partial block, then (at 96 and 112 tokens) B's 4th and 3rd
  // prompt blocks. B needs its cached blocks plus fresh ones for its 80 tokens, more than
  // is free, until A finishes at 128 tokens; B then recomputes with 2 blocks (32 tokens)
  // still cached. One preemption.
  EXPECT_EQ(sim.metrics().preemptions, 1u);
  ASSERT_TRUE(rec.out[a].finished && rec.out[b].finished);
  EXPECT_EQ(rec.out[a].tokens, 64);
  EXPECT_EQ(rec.out[b].tokens, 64);
  EXPECT_LT(rec.out[a].t_done, rec.out[b].t_done);
  EXPECT_EQ(sim.metrics().prefix_cache_hits, 32u);
  int steps_with_preemption = 0;
  for (const auto& s : sim.steps()) steps_with_preemption += s.preempted;
  EXPECT_EQ(steps_with_preemption, 1);
}

TEST(Engine, RepeatedPromptHitsThePrefixCache) {
  Simulator sim(make_config());
  Recorder rec;
  sim.set_listener(&rec);
  const std::string prompt = words(100);
  const ReqId first = sim.submit(0, SimRequestSpec{prompt, 0, 28, true, 0});
  drain(sim);
  const ReqId again = sim.submit(sim.now(), SimRequestSpec{prompt, 0, 4, true, 0});
  drain(sim);
  // 100 tokens = 6 full blocks + 4; one token is always recomputed, so the repeat hits
  // min(6, (100 − 1) / 16 = 6) blocks = 96 tokens.
  EXPECT_EQ(rec.out[first].cached, 0);
  EXPECT_EQ(rec.out[again].cached, 96);
  EXPECT_EQ(rec.out[again].info.cached_tokens, 96);
  EXPECT_EQ(sim.metrics().prefix_cache_queries, 200u);
  EXPECT_EQ(sim.metrics().prefix_cache_hits, 96u);

  // The next turn carries the first reply: prompt (100) + reply (28) + 2 new tokens.
  // After the first request 127 tokens had KV (the last sampled token never does):
  // 7 full blocks = 112 tokens hit.
  const std::string follow = prompt + sim.output_text(first, 0, 28) + " next turn";
  const ReqId turn2 = sim.submit(sim.now(), SimRequestSpec{follow, 0, 4, true, 0});
  drain(sim);
  EXPECT_EQ(rec.out[turn2].cached, 112);
}

TEST(Engine, PrefixCachingOffFindsNothing) {
  auto cfg = make_config();
  cfg.enable_prefix_caching = false;
  Simulator sim(cfg);
  Recorder rec;
  sim.set_listener(&rec);
  sim.submit(0, SimRequestSpec{words(100), 0, 4, true, 0});
  drain(sim);
  const ReqId again = sim.submit(sim.now(), SimRequestSpec{words(100), 0, 4, true, 0});
  drain(sim);
  EXPECT_EQ(rec.out[again].cached, 0);
  EXPECT_EQ(sim.metrics().prefix_cache_queries, 0u);
}

TEST(Engine, SpeculativeDecodingEmitsTheExpectedTokensPerStep) {
  auto cfg = make_config();
  cfg.speculative_k = 4;
  cfg.speculative_alpha = 0.8;
  cfg.seed = 7;
  Simulator sim(cfg);
  for (int i = 0; i < 8; ++i) sim.submit(0, SimRequestSpec{"", 64, 2000, true, 0});
  drain(sim);
  const auto& m = sim.metrics();
  // Each verify step drafts 4 and keeps 1 + accepted; expected (1 − 0.8^5)/(1 − 0.8) =
  // 3.3616. Over ~4,760 verify steps the sample mean's standard error is ~0.02.
  const double per_step = 1.0 + static_cast<double>(m.spec_accepted_tokens) / static_cast<double>(m.spec_drafts);
  EXPECT_NEAR(per_step, 3.3616, 0.08);
  EXPECT_EQ(m.spec_draft_tokens, 4 * m.spec_drafts);
  EXPECT_EQ(m.generation_tokens, 8u * 2000u);
  // A verify step over B sequences processes B · (k + 1) tokens.
  bool saw_full = false;
  for (const auto& s : sim.steps())
    if (s.prefill_tokens == 0 && s.num_seqs == 8) {
      EXPECT_EQ(s.decode_tokens, 8 * 5);
      saw_full = true;
    }
  EXPECT_TRUE(saw_full);
}

TEST(Engine, DefaultStopEndsSomeRepliesEarlyButNotBeforeMinTokens) {
  auto cfg = make_config();
  cfg.early_stop_fraction = 1.0;
  Simulator sim(cfg);
  Recorder rec;
  sim.set_listener(&rec);
  for (int i = 0; i < 50; ++i) sim.submit(0, SimRequestSpec{"", 16, 100, false, 20});
  const ReqId exact = sim.submit(0, SimRequestSpec{"", 16, 100, true, 0});
  drain(sim);
  int shorter = 0;
  for (auto& [id, o] : rec.out) {
    if (id == exact) {
      EXPECT_EQ(o.tokens, 100);
      EXPECT_EQ(o.info.reason, FinishReason::length);
      continue;
    }
    EXPECT_EQ(o.info.reason, FinishReason::stop);
    EXPECT_GE(o.tokens, 20);
    EXPECT_LE(o.tokens, 100);
    shorter += o.tokens < 100;
    EXPECT_EQ(o.info.completion_tokens, o.tokens);
  }
  EXPECT_GT(shorter, 40);
}

TEST(Engine, SameSeedSameRunDifferentSeedDifferentLengths) {
  auto run = [](std::uint64_t seed) {
    auto cfg = make_config();
    cfg.seed = seed;
    cfg.speculative_k = 2;
    Simulator sim(cfg);
    Recorder rec;
    sim.set_listener(&rec);
    for (int i = 0; i < 20; ++i) sim.submit(ms_to_ns(i * 5), SimRequestSpec{"", 100 + i * 10, 64, false, 0});
    drain(sim);
    std::vector<std::pair<Nanos, int>> r;
    for (auto& [id, o] : rec.out) r.emplace_back(o.t_done, o.tokens);
    return std::make_pair(r, sim.output_text(3, 0, 5));
  };
  EXPECT_EQ(run(1), run(1));
  EXPECT_NE(run(1).first, run(2).first);
}

TEST(Engine, OutputTextHasOneSimTokenPerGeneratedToken) {
  Simulator sim(make_config());
  const std::string text = sim.output_text(1, 0, 37);
  EXPECT_EQ(SimTokenizer{}.count(text), 37);
  EXPECT_EQ(sim.output_text(1, 0, 10) + sim.output_text(1, 10, 27), text);
}

TEST(Engine, RejectsPromptsBeyondMaxModelLen) {
  Simulator sim(make_config());  // Llama-3-8B: 8192
  Recorder rec;
  sim.set_listener(&rec);
  const ReqId id = sim.submit(0, SimRequestSpec{"", 8100, 100, true, 0});
  drain(sim);
  EXPECT_NE(rec.out[id].rejected.find("maximum context length is 8192"), std::string::npos);
  EXPECT_EQ(sim.active(), 0u);
}

TEST(Engine, SaturatedFrontEndDelaysRequestsWhileTheAcceleratorIdles) {
  auto cfg = make_config();
  cfg.frontend_request_us = 10'000;  // 10 ms of CPU per request on one worker
  cfg.frontend_token_us = 0;
  Simulator sim(cfg);
  Recorder rec;
  sim.set_listener(&rec);
  std::vector<ReqId> ids;
  for (int i = 0; i < 10; ++i) ids.push_back(sim.submit(0, SimRequestSpec{"", 16, 2, true, 0}));
  drain(sim);
  // FCFS on one worker: the k-th request (0-based) is handed over at (k + 1) · 10 ms.
  for (int k = 0; k < 10; ++k) EXPECT_EQ(rec.out[ids[static_cast<std::size_t>(k)]].t_accepted, (k + 1) * 10 * kNsPerMs);
  EXPECT_NEAR(sim.frontend_busy_s(), 0.1, 0.005);  // 10 × 10 ms + 65 µs per step's output
  // The engine never had more than one or two requests at once: a 2-token reply takes
  // ~10 ms, as long as the front end needs per request.
  int max_running = 0;
  for (const auto& s : sim.steps()) max_running = std::max(max_running, s.running);
  EXPECT_LE(max_running, 2);
  // With 10 workers they all arrive at 10 ms and run in one batch.
  cfg.frontend_workers = 10;
  Simulator wide(cfg);
  for (int i = 0; i < 10; ++i) wide.submit(0, SimRequestSpec{"", 16, 2, true, 0});
  drain(wide);
  max_running = 0;
  for (const auto& s : wide.steps()) max_running = std::max(max_running, s.running);
  EXPECT_EQ(max_running, 10);
}

TEST(Engine, DataParallelRouterSpreadsRequests) {
  auto cfg = make_config();
  cfg.data_parallel_size = 2;
  cfg.frontend_workers = 2;  // so both replicas' outputs leave at once
  cfg.frontend_request_us = 0;
  cfg.frontend_token_us = 0;
  Simulator sim(cfg);
  Recorder rec;
  sim.set_listener(&rec);
  const ReqId a = sim.submit(0, SimRequestSpec{"", 1000, 4, true, 0});
  const ReqId b = sim.submit(0, SimRequestSpec{"", 1000, 4, true, 0});
  drain(sim);
  std::set<int> replicas;
  for (const auto& s : sim.steps()) replicas.insert(s.replica);
  EXPECT_EQ(replicas, (std::set<int>{0, 1}));
  // Same work on idle twin replicas: same first-token time.
  EXPECT_EQ(rec.out[a].t_first, rec.out[b].t_first);
}

TEST(Engine, AbortFreesEverything) {
  auto cfg = make_config();
  Simulator sim(cfg);
  Recorder rec;
  sim.set_listener(&rec);
  const ReqId a = sim.submit(0, SimRequestSpec{"", 500, 1000, true, 0});
  const ReqId b = sim.submit(0, SimRequestSpec{"", 500, 1000, true, 0});
  sim.run_until(ms_to_ns(100));
  sim.abort(a, sim.now());
  sim.abort(b, sim.now());
  drain(sim);
  EXPECT_EQ(sim.active(), 0u);
  EXPECT_FALSE(rec.out[a].finished);
  EXPECT_DOUBLE_EQ(sim.gauges().kv_usage, 0.0);
  EXPECT_EQ(sim.metrics().success_abort, 2u);
}

TEST(Engine, ModelThatDoesNotFitIsAConfigError) {
  EXPECT_THROW(Simulator(make_config("L40S", "Llama-3-70B")), InputError);
  auto cfg = make_config("L40S", "Llama-3-70B");
  cfg.tensor_parallel_size = 4;
  cfg.interconnect = LinkKind::pcie;
  EXPECT_NO_THROW(Simulator{cfg});
  cfg.interconnect = LinkKind::nvlink;  // L40S has none
  EXPECT_THROW(Simulator{cfg}, InputError);
}

TEST(Engine, PrometheusPageUsesVllmNames) {
  Simulator sim(make_config());
  sim.submit(0, SimRequestSpec{words(40), 0, 8, true, 0});
  sim.run_until(ms_to_ns(1));  // accepted, first step running
  std::string page = sim.render_metrics();
  EXPECT_NE(page.find("vllm:num_requests_running{model_name=\"Llama-3-8B\"} 1\n"), std::string::npos);
  EXPECT_NE(page.find("vllm:num_requests_waiting{model_name=\"Llama-3-8B\"} 0\n"), std::string::npos);
  drain(sim);
  page = sim.render_metrics();
  for (const char* name :
       {"vllm:kv_cache_usage_perc", "vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total",
        "vllm:num_preemptions_total", "vllm:request_queue_time_seconds_bucket",
        "vllm:request_prefill_time_seconds_count", "vllm:request_decode_time_seconds_sum",
        "vllm:time_to_first_token_seconds_bucket", "vllm:inter_token_latency_seconds_count",
        "vllm:e2e_request_latency_seconds_count", "vllm:spec_decode_num_draft_tokens_total",
        "vllm:spec_decode_num_accepted_tokens_total"})
    EXPECT_NE(page.find(name), std::string::npos) << name;
  EXPECT_NE(page.find("vllm:prompt_tokens_total{model_name=\"Llama-3-8B\"} 40\n"), std::string::npos);
  EXPECT_NE(page.find("vllm:generation_tokens_total{model_name=\"Llama-3-8B\"} 8\n"), std::string::npos);
  // 8 tokens → 7 inter-token gaps, one TTFT.
  EXPECT_NE(page.find("vllm:inter_token_latency_seconds_count{model_name=\"Llama-3-8B\"} 7\n"), std::string::npos);
  EXPECT_NE(page.find("vllm:time_to_first_token_seconds_bucket{model_name=\"Llama-3-8B\",le=\"+Inf\"} 1\n"),
            std::string::npos);
  EXPECT_NE(page.find("# TYPE vllm:e2e_request_latency_seconds histogram"), std::string::npos);
}

}  // namespace
}  // namespace inferscope::sim
