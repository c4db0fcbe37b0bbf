#include "inferscope/sim/server.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cmath>
#include <fstream>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "inferscope/core/errors.h"
#include "inferscope/core/sim_tokenizer.h"
#include "inferscope/core/version.h"
#include "inferscope/net/http_server.h"
#include "inferscope/sim/engine.h"

namespace inferscope::sim {
namespace {
using nlohmann::json;
using Timer = boost::asio::steady_timer;

enum class Api : std::uint8_t { completions, chat };
enum class MidFault : std::uint8_t { none, error_event, reset, stall, malformed };

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
struct Rng {
  std::uint64_t state;
  double uniform() {
    state += 0x9e3779b97f4a7c15ULL;
    return static_cast<double>(mix(state) >> 11) * 0x1.0p-53;
  }
};

// JSON string body (no quotes) of `s`.
std::string escape(std::string_view s) {
  const std::string q = json(std::string(s)).dump();
  return q.substr(1, q.size() - 2);
}

std::string error_json(int code, std::string_view type, std::string_view message) {
  return json{{"error", {{"message", message}, {"type", type}, {"param", nullptr}, {"code", code}}}}.dump();
}

const net::Headers kJson = {{"Content-Type", "application/json"}};

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

// Token texts under the sim tokenizer's rule (a word with the spaces before it).
std::vector<std::string_view> split_tokens(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0, i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_space(text[i])) ++i;
    if (i == text.size()) break;
    while (i < text.size() && !is_space(text[i])) ++i;
    out.push_back(text.substr(start, i - start));
    start = i;
  }
  return out;
}

Nanos steady_ns() { return monotonic_now_ns(); }

// One request being served.
struct Call {
  std::shared_ptr<net::ResponseStream> stream;
  Api api = Api::completions;
  bool streaming = false;
  bool include_usage = false;
  bool continuous_usage = false;
  std::string rid;
  std::int64_t created = 0;
  int prompt_tokens = 0;
  int completion = 0;
  int cached = 0;
  std::string text;  // non-streaming: the reply so far
  std::string last_text;  // the final tokens' text, written with finish_reason
  MidFault fault = MidFault::none;
  int trigger = 0;
  bool faulted = false;
  // Stall: writes wait in `held` until the timer fires.
  std::unique_ptr<Timer> stall_timer;
  bool stalled = false;
  bool finish_after_stall = false;
  std::string held;
  // Ground truth (CLOCK_MONOTONIC ns of the simulated times).
  Nanos t_arrival = -1, t_accepted = -1, t_sched = -1;
  std::vector<Nanos> token_ns;
  Nanos max_lag_ns = 0;  // largest |write time − simulated time| of its chunks (server-side accuracy)
};

}  // namespace

struct SimServer::Impl : EngineListener, std::enable_shared_from_this<Impl> {
  Impl(EngineConfig c, ServeOptions o) : cfg(std::move(c)), opt(std::move(o)), sim(cfg) {
    if (!(opt.time_scale > 0) || opt.time_scale > 1e6) throw InputError("--time-scale", "must be in (0, 1e6]");
    const auto& f = opt.faults;
    for (double r : {f.http_500_rate, f.http_503_rate, f.http_429_rate, f.error_event_rate, f.reset_rate, f.stall_rate,
                     f.malformed_rate})
      if (!(r >= 0 && r <= 1)) throw InputError("--fault-*-rate", "fault rates must be in [0, 1]");
    if (f.http_500_rate + f.http_503_rate + f.http_429_rate > 1)
      throw InputError("--fault-http-*-rate", "HTTP fault rates add up to more than 1");
    if (f.error_event_rate + f.reset_rate + f.stall_rate + f.malformed_rate > 1)
      throw InputError("--fault-*-rate", "mid-stream fault rates add up to more than 1");
    if (f.stall_s < 0 || f.cold_start_s < 0 || f.cold_start_requests < 0 || f.retry_after_s < 0)
      throw InputError("--fault-*", "fault durations and counts must not be negative");
    if (!opt.ground_truth_path.empty()) {
      gt.open(opt.ground_truth_path, std::ios::out | std::ios::trunc);
      if (!gt) throw InputError("--ground-truth", "cannot write " + opt.ground_truth_path);
    }
    sim.set_listener(this);
  }

  void bind() {
    net::HttpServerOptions so;
    so.address = opt.address;
    so.port = opt.port;
    so.threads = 1;  // the engine is single-threaded; every response lives on this thread
    std::weak_ptr<Impl> weak = weak_from_this();
    server = std::make_unique<net::HttpServer>(so, [weak](const net::HttpRequest& req,
                                                          std::shared_ptr<net::ResponseStream> s) {
      if (auto self = weak.lock()) self->handle(req, std::move(s));
    });
    timer = std::make_unique<Timer>(server->io());
    t0 = steady_ns();
  }

  EngineConfig cfg;
  ServeOptions opt;
  Simulator sim;
  std::unique_ptr<net::HttpServer> server;
  std::unique_ptr<Timer> timer;
  Nanos t0 = 0;
  Nanos armed_for = -1;  // virtual time the engine timer is set for
  std::uint64_t next_rid = 1;
  std::uint64_t arrivals = 0;
  std::unordered_map<ReqId, std::shared_ptr<Call>> calls;
  std::unordered_set<std::shared_ptr<net::ResponseStream>> stalled_forever;
  std::unordered_map<Call*, std::shared_ptr<Call>> stalling;  // paused streams
  std::ofstream gt;
  bool stopped = false;

  // ---- time -------------------------------------------------------------------------
  Nanos virtual_now() const {
    return static_cast<Nanos>(std::floor(static_cast<double>(steady_ns() - t0) * opt.time_scale));
  }
  Nanos wall_of(Nanos v) const {
    return t0 + static_cast<Nanos>(std::ceil(static_cast<double>(v) / opt.time_scale));
  }

  // Runs the engine up to now and sets the timer for its next event.
  void pump() {
    sim.run_until(std::max(sim.now(), virtual_now()));
    arm();
  }
  void arm() {
    const auto next = sim.next_event_time();
    if (!next || *next == armed_for) return;
    armed_for = *next;
    timer->expires_at(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(wall_of(*next))));
    timer->async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
      if (ec) return;  // re-armed or stopped
      if (auto self = weak.lock()) {
        self->armed_for = -1;
        self->pump();
      }
    });
  }

  // ---- routing ----------------------------------------------------------------------
  void handle(const net::HttpRequest& req, std::shared_ptr<net::ResponseStream> s) {
    const std::string_view path = req.path();
    const bool get = req.method == "GET", post = req.method == "POST";
    if (path == "/health" && get) return s->respond(200, {}, "");
    if (path == "/version" && get)
      return s->respond(200, kJson, json{{"version", fmt::format("inferscope-sim-{}", kVersion)}}.dump());
    if (path == "/v1/models" && get) return s->respond(200, kJson, models_json());
    if (path == "/metrics" && get) {
      pump();
      return s->respond(200, {{"Content-Type", "text/plain; version=0.0.4; charset=utf-8"}}, sim.render_metrics());
    }
    if (path == "/tokenize" && post) return tokenize(req, *s);
    if (path == "/v1/completions" && post) return generate(req, std::move(s), Api::completions);
    if (path == "/v1/chat/completions" && post) return generate(req, std::move(s), Api::chat);
    for (std::string_view known : {"/health", "/version", "/v1/models", "/metrics", "/tokenize", "/v1/completions",
                                   "/v1/chat/completions"})
      if (path == known) return s->respond(405, kJson, R"({"detail":"Method Not Allowed"})");
    s->respond(404, kJson, R"({"detail":"Not Found"})");
  }

  std::string models_json() const {
    const auto now_s = realtime_now_ns() / kNsPerSec;
    return json{{"object", "list"},
                {"data",
                 {{{"id", cfg.model_name()},
                   {"object", "model"},
                   {"created", now_s},
                   {"owned_by", "vllm"},
                   {"root", cfg.model_name()},
                   {"parent", nullptr},
                   {"max_model_len", cfg.effective_max_model_len()},
                   {"permission", json::array()}}}}}
        .dump();
  }

  // Prompt text of a request body, or an error message.
  static std::optional<std::string> messages_prompt(const json& msgs, std::string& err) {
    if (!msgs.is_array() || msgs.empty()) {
      err = "'messages' must be a non-empty array";
      return std::nullopt;
    }
    std::vector<ChatMessage> out;
    for (const auto& m : msgs) {
      if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
        err = "each message needs a string 'role'";
        return std::nullopt;
      }
      ChatMessage cm{m["role"].get<std::string>(), ""};
      const json& c = m.contains("content") ? m["content"] : json();
      if (c.is_string()) {
        cm.content = c.get<std::string>();
      } else if (c.is_array()) {
        for (const auto& part : c)
          if (part.is_object() && part.contains("text") && part["text"].is_string())
            cm.content += part["text"].get<std::string>();
      }
      out.push_back(std::move(cm));
    }
    return render_chat_prompt(out);
  }

  void tokenize(const net::HttpRequest& req, net::ResponseStream& s) {
    const json body = json::parse(req.body, nullptr, false);
    std::string text, err;
    if (body.is_object() && body.contains("prompt") && body["prompt"].is_string()) {
      text = body["prompt"].get<std::string>();
    } else if (body.is_object() && body.contains("messages")) {
      auto p = messages_prompt(body["messages"], err);
      if (!p) return s.respond(400, kJson, error_json(400, "BadRequestError", err));
      text = *p;
    } else {
      return s.respond(400, kJson, error_json(400, "BadRequestError", "expected 'prompt' (string) or 'messages'"));
    }
    json ids = json::array();
    for (auto tok : split_tokens(text)) ids.push_back(SimTokenizer::token_id(tok));
    const auto n = ids.size();
    s.respond(200, kJson,
              json{{"count", n}, {"max_model_len", cfg.effective_max_model_len()}, {"tokens", std::move(ids)},
                   {"token_strs", nullptr}}
                  .dump());
  }

  void generate(const net::HttpRequest& req, std::shared_ptr<net::ResponseStream> s, Api api) {
    const auto bad = [&](std::string_view msg) { s->respond(400, kJson, error_json(400, "BadRequestError", msg)); };
    const json body = json::parse(req.body, nullptr, false);
    if (!body.is_object()) return bad("the request body is not a JSON object");
    if (body.contains("model") && body["model"] != cfg.model_name())
      return s->respond(404, kJson,
                        error_json(404, "NotFoundError",
                                   fmt::format("The model `{}` does not exist.",
                                               body["model"].is_string() ? body["model"].get<std::string>() : "?")));
    SimRequestSpec spec;
    std::string err;
    int prompt_tokens = 0;
    if (api == Api::chat) {
      auto p = messages_prompt(body.value("messages", json()), err);
      if (!p) return bad(err);
      spec.prompt = std::move(*p);
    } else {
      const json& p = body.contains("prompt") ? body["prompt"] : json();
      if (p.is_string()) {
        spec.prompt = p.get<std::string>();
      } else if (p.is_array() && p.size() == 1 && p[0].is_string()) {
        spec.prompt = p[0].get<std::string>();
      } else if (p.is_array() && !p.empty() && p[0].is_number_integer()) {
        spec.synthetic_prompt_tokens = static_cast<int>(p.size());  // token ids: length only
      } else {
        return bad("'prompt' must be a string, a one-string array or an array of token ids");
      }
    }
    prompt_tokens = spec.prompt.empty() ? spec.synthetic_prompt_tokens : SimTokenizer{}.count(spec.prompt);
    if (prompt_tokens < 1) return bad("the prompt is empty");
    const int max_len = cfg.effective_max_model_len();
    json mt = body.contains("max_completion_tokens") ? body["max_completion_tokens"] : body.value("max_tokens", json());
    if (mt.is_null())
      spec.max_tokens = api == Api::chat ? std::max(1, max_len - prompt_tokens) : 16;
    else if (mt.is_number_integer() && mt.get<std::int64_t>() >= 1 && mt.get<std::int64_t>() <= (1 << 30))
      spec.max_tokens = mt.get<int>();
    else
      return bad("'max_tokens' must be a positive integer");
    if (prompt_tokens + spec.max_tokens > max_len)
      return bad(fmt::format("This model's maximum context length is {} tokens. However, you requested {} tokens "
                             "({} in the messages, {} in the completion). Please reduce the length of the messages "
                             "or completion.",
                             max_len, prompt_tokens + spec.max_tokens, prompt_tokens, spec.max_tokens));
    const json ie = body.value("ignore_eos", json(false));
    const json mn = body.value("min_tokens", json(0));
    if (!ie.is_boolean()) return bad("'ignore_eos' must be a boolean");
    if (!mn.is_number_integer() || mn.get<std::int64_t>() < 0) return bad("'min_tokens' must be a non-negative integer");
    spec.ignore_eos = ie.get<bool>();
    spec.min_tokens = static_cast<int>(std::min<std::int64_t>(mn.get<std::int64_t>(), spec.max_tokens));
    const json st = body.value("stream", json(false));
    if (!st.is_boolean()) return bad("'stream' must be a boolean");

    auto call = std::make_shared<Call>();
    call->stream = s;
    call->api = api;
    call->streaming = st.get<bool>();
    if (body.contains("stream_options") && body["stream_options"].is_object()) {
      call->include_usage = body["stream_options"].value("include_usage", false);
      call->continuous_usage = body["stream_options"].value("continuous_usage_stats", false);
    }
    call->rid = fmt::format("{}-{}", api == Api::chat ? "chatcmpl" : "cmpl", next_rid++);
    call->created = realtime_now_ns() / kNsPerSec;
    call->prompt_tokens = prompt_tokens;
    call->t_arrival = req.t_received_ns;

    // Faults, from a per-request draw so a seed replays the same pattern.
    const std::uint64_t n = ++arrivals;
    Rng rng{mix(opt.faults.seed ^ mix(n))};
    const auto& f = opt.faults;
    double u = rng.uniform();
    if (u < f.http_500_rate) return fail_early(*call, 500, "InternalServerError", "simulated internal error", {});
    u -= f.http_500_rate;
    if (u < f.http_503_rate) return fail_early(*call, 503, "ServiceUnavailableError", "simulated overload", {});
    u -= f.http_503_rate;
    if (u < f.http_429_rate)
      return fail_early(*call, 429, "RateLimitError", "simulated rate limit",
                        {{"Retry-After", std::to_string(f.retry_after_s)}});
    double v = rng.uniform();
    for (auto [rate, kind] : {std::pair{f.error_event_rate, MidFault::error_event}, std::pair{f.reset_rate, MidFault::reset},
                              std::pair{f.stall_rate, MidFault::stall}, std::pair{f.malformed_rate, MidFault::malformed}}) {
      if (v < rate) {
        call->fault = kind;
        break;
      }
      v -= rate;
    }
    call->trigger = 1 + static_cast<int>(rng.uniform() * std::max(1, spec.max_tokens / 2));

    if (static_cast<int>(n) <= f.cold_start_requests && f.cold_start_s > 0) {
      auto t = std::make_shared<Timer>(server->io());
      t->expires_after(std::chrono::nanoseconds(s_to_ns(f.cold_start_s)));
      t->async_wait([weak = weak_from_this(), call, spec = std::move(spec), t](const boost::system::error_code& ec) mutable {
        if (ec || call->stream->closed()) return;
        if (auto self = weak.lock()) self->submit(std::move(call), std::move(spec));
      });
      return;
    }
    submit(std::move(call), std::move(spec));
  }

  void fail_early(Call& c, int status, std::string_view type, std::string_view msg, net::Headers extra) {
    extra.emplace_back("Content-Type", "application/json");
    c.stream->respond(status, extra, error_json(status, type, msg));
    write_ground_truth(c, fmt::format("http_{}", status), "");
  }

  void submit(std::shared_ptr<Call> call, SimRequestSpec spec) {
    pump();
    const ReqId id = sim.submit(std::max(sim.now(), virtual_now()), std::move(spec));
    call->stream->on_close([weak = weak_from_this(), id, strm = std::weak_ptr(call->stream)] {
      auto self = weak.lock();
      if (!self) return;
      // Deferred: a close can be noticed inside a write made from an engine callback.
      boost::asio::post(self->server->io(), [weak, id, strm] {
        auto me = weak.lock();
        if (!me) return;
        if (auto s = strm.lock()) me->stalled_forever.erase(s);
        me->drop(id, "client_closed");
      });
    });
    calls.emplace(id, std::move(call));
    arm();
  }

  // The engine forgets `id` (client gone or a fault ended the stream).
  void drop(ReqId id, std::string_view outcome) {
    auto it = calls.find(id);
    if (it == calls.end()) return;
    sim.abort(id, std::max(sim.now(), virtual_now()));
    write_ground_truth(*it->second, outcome, "");
    calls.erase(it);
  }

  // ---- output -----------------------------------------------------------------------
  std::string chunk_prefix(const Call& c) const {
    return fmt::format(R"(data: {{"id":"{}","object":"{}","created":{},"model":"{}",)", c.rid,
                       c.api == Api::chat ? "chat.completion.chunk" : "text_completion", c.created,
                       escape(cfg.model_name()));
  }
  std::string usage_json(const Call& c, bool details) const {
    std::string u = fmt::format(R"({{"prompt_tokens":{},"total_tokens":{},"completion_tokens":{})", c.prompt_tokens,
                                c.prompt_tokens + c.completion, c.completion);
    if (details) u += fmt::format(R"(,"prompt_tokens_details":{{"cached_tokens":{}}})", c.cached);
    return u + "}";
  }
  std::string content_chunk(const Call& c, std::string_view text, std::string_view finish) const {
    const std::string fr = finish.empty() ? "null" : fmt::format("\"{}\"", finish);
    std::string out = chunk_prefix(c);
    if (c.api == Api::chat)
      out += fmt::format(R"("choices":[{{"index":0,"delta":{{"content":"{}"}},"logprobs":null,"finish_reason":{}}}])",
                         escape(text), fr);
    else
      out += fmt::format(R"("choices":[{{"index":0,"text":"{}","logprobs":null,"finish_reason":{},"stop_reason":null}}])",
                         escape(text), fr);
    if (c.continuous_usage) out += ",\"usage\":" + usage_json(c, false);
    return out + "}\n\n";
  }

  void send(Call& c, std::string data) {
    if (c.stalled)
      c.held += data;
    else
      c.stream->write(std::move(data));
  }
  void end_stream(Call& c) {
    if (c.stalled)
      c.finish_after_stall = true;
    else
      c.stream->finish();
  }

  // Applies a mid-stream fault when the reply reaches its trigger. Returns false when the
  // request is over (the caller must not touch it again).
  bool maybe_fault(ReqId id, Call& c, std::string& chunk) {
    if (c.faulted || c.fault == MidFault::none || c.completion < c.trigger) return true;
    c.faulted = true;
    switch (c.fault) {
      case MidFault::error_event:
        send(c, "data: " + error_json(500, "InternalServerError", "simulated engine error mid-stream") +
                    "\n\ndata: [DONE]\n\n");
        end_stream(c);
        drop(id, "fault_error_event");
        return false;
      case MidFault::reset:
        c.stream->abort_reset();
        drop(id, "fault_reset");
        return false;
      case MidFault::malformed:
        chunk = chunk_prefix(c) + R"("choices":[{"index":0,"text":)" + "\n\n";  // cut-off JSON
        return true;
      case MidFault::stall:
        if (opt.faults.stall_s <= 0) {
          stalled_forever.insert(c.stream);  // keep the connection open, never write again
          drop(id, "fault_stall_forever");
          return false;
        }
        c.stalled = true;
        c.stall_timer = std::make_unique<Timer>(server->io());
        c.stall_timer->expires_after(std::chrono::nanoseconds(s_to_ns(opt.faults.stall_s)));
        // The call outlives its engine request (it may finish while stalled): `stalling`
        // keeps it until the stall ends; the handler holds no owning reference.
        stalling.emplace(&c, calls.at(id));
        c.stall_timer->async_wait([weak = weak_from_this(), raw = &c](const boost::system::error_code& ec) {
          auto self = weak.lock();
          if (ec || !self) return;
          auto node = self->stalling.extract(raw);
          if (node.empty()) return;
          Call& sc = *node.mapped();
          sc.stalled = false;
          if (!sc.held.empty()) sc.stream->write(std::move(sc.held));
          sc.held.clear();
          if (sc.finish_after_stall) sc.stream->finish();
        });
        return true;
      case MidFault::none: break;
    }
    return true;
  }

  void on_accepted(ReqId id, Nanos t) override {
    auto it = calls.find(id);
    if (it == calls.end()) return;
    Call& c = *it->second;
    c.t_accepted = wall_of(t);
    if (!c.streaming) return;
    c.stream->start(200, {{"Content-Type", "text/event-stream; charset=utf-8"}, {"Cache-Control", "no-cache"}}, true);
    if (c.api == Api::chat)
      send(c, chunk_prefix(c) +
                  R"("choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}])" +
                  (c.continuous_usage ? ",\"usage\":" + usage_json(c, false) : std::string()) + "}\n\n");
  }

  void on_rejected(ReqId id, Nanos, const std::string& message) override {
    auto it = calls.find(id);
    if (it == calls.end()) return;
    Call& c = *it->second;
    c.stream->respond(400, kJson, error_json(400, "BadRequestError", message));
    write_ground_truth(c, "rejected", "");
    calls.erase(it);
  }

  void on_scheduled(ReqId id, Nanos t, int cached) override {
    auto it = calls.find(id);
    if (it == calls.end()) return;
    it->second->t_sched = wall_of(t);
    it->second->cached = cached;
  }

  void on_tokens(ReqId id, Nanos t, int first, int n, bool last) override {
    auto it = calls.find(id);
    if (it == calls.end()) return;
    Call& c = *it->second;
    const Nanos w = wall_of(t);
    // Off by how much, late or early (a step's chunks are written back to back and may
    // run ahead of the front end's modelled pace).
    c.max_lag_ns = std::max(c.max_lag_ns, std::abs(steady_ns() - w));
    c.token_ns.insert(c.token_ns.end(), static_cast<std::size_t>(n), w);
    c.completion = first + n;
    std::string text = sim.output_text(id, first, n);
    if (!c.streaming) {
      c.text += text;
      return;
    }
    if (last) {  // written by on_finished with the finish reason, as vLLM does
      c.last_text = std::move(text);
      return;
    }
    std::string chunk = content_chunk(c, text, "");
    if (!maybe_fault(id, c, chunk)) return;
    send(c, std::move(chunk));
  }

  void on_finished(ReqId id, Nanos, const FinishInfo& info) override {
    auto it = calls.find(id);
    if (it == calls.end()) return;
    const std::shared_ptr<Call> cp = it->second;
    Call& c = *cp;
    c.cached = info.cached_tokens;
    const std::string_view reason = to_string(info.reason);
    if (!c.streaming) {
      std::string choice =
          c.api == Api::chat
              ? fmt::format(R"({{"index":0,"message":{{"role":"assistant","content":"{}","tool_calls":[]}},"logprobs":null,"finish_reason":"{}","stop_reason":null}})",
                            escape(c.text), reason)
              : fmt::format(R"({{"index":0,"text":"{}","logprobs":null,"finish_reason":"{}","stop_reason":null,"prompt_logprobs":null}})",
                            escape(c.text), reason);
      c.stream->respond(200, kJson,
                        fmt::format(R"({{"id":"{}","object":"{}","created":{},"model":"{}","choices":[{}],"usage":{}}})",
                                    c.rid, c.api == Api::chat ? "chat.completion" : "text_completion", c.created,
                                    escape(cfg.model_name()), choice, usage_json(c, true)));
    } else {
      std::string chunk = content_chunk(c, c.last_text, reason);
      if (!maybe_fault(id, c, chunk)) return;
      send(c, std::move(chunk));
      if (c.include_usage)
        send(c, chunk_prefix(c) + R"("choices":[],"usage":)" + usage_json(c, true) + "}\n\n");
      send(c, "data: [DONE]\n\n");
      end_stream(c);
    }
    write_ground_truth(c, "ok", reason);
    calls.erase(id);
  }

  void write_ground_truth(const Call& c, std::string_view outcome, std::string_view finish_reason) {
    if (!gt.is_open()) return;
    json j = {{"response_id", c.rid},
              {"outcome", outcome},
              {"arrival_ns", c.t_arrival},
              {"accepted_ns", c.t_accepted},
              {"scheduled_ns", c.t_sched},
              {"first_token_ns", c.token_ns.empty() ? -1 : c.token_ns.front()},
              {"token_ns", c.token_ns},
              {"max_lag_ns", c.max_lag_ns},
              {"prompt_tokens", c.prompt_tokens},
              {"completion_tokens", c.completion},
              {"cached_tokens", c.cached},
              {"finish_reason", finish_reason}};
    gt << j.dump() << '\n';
  }

  void shutdown() {
    if (stopped) return;
    stopped = true;
    if (server) server->stop();
    // Streams and timers go while the io_context still exists.
    stalled_forever.clear();
    stalling.clear();
    calls.clear();
    if (gt.is_open()) gt.flush();
  }
};

SimServer::SimServer(EngineConfig cfg, ServeOptions opt)
    : impl_(std::make_shared<Impl>(std::move(cfg), std::move(opt))) {
  impl_->bind();
}
SimServer::~SimServer() {
  stop();
  impl_->timer.reset();
}
std::uint16_t SimServer::port() const { return impl_->server->port(); }
std::string SimServer::base_url() const { return impl_->server->base_url(); }
void SimServer::start() {
  impl_->t0 = steady_ns();
  impl_->server->start();
}
void SimServer::run() {
  impl_->t0 = steady_ns();
  impl_->server->run();
}
void SimServer::stop() { impl_->shutdown(); }

}  // namespace inferscope::sim
