#include "inferscope/workload/workload.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "inferscope/core/errors.h"
#include "inferscope/workload/prompt.h"
#include "inferscope/workload/request_types.h"
#include "yaml_util.h"

namespace inferscope::workload {
namespace {
using detail::as_bool;
using detail::as_double;
using detail::as_int;
using detail::as_string;
using detail::fail;

bool ends_with(std::string_view s, std::string_view suf) {
  return s.size() >= suf.size() && s.substr(s.size() - suf.size()) == suf;
}

// YAML -> JSON for inline schemas and tool lists. Quoted scalars stay strings.
nlohmann::json yaml_to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json j = nlohmann::json::object();
      for (const auto& kv : n) j[kv.first.Scalar()] = yaml_to_json(kv.second);
      return j;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& e : n) j.push_back(yaml_to_json(e));
      return j;
    }
    case YAML::NodeType::Scalar: {
      if (n.Tag() == "!") return n.Scalar();
      const std::string& s = n.Scalar();
      if (s == "true" || s == "false") return s == "true";
      if (s == "null" || s == "~") return nullptr;
      std::int64_t i = 0;
      if (YAML::convert<std::int64_t>::decode(n, i)) return i;
      double d = 0;
      if (YAML::convert<double>::decode(n, d)) return d;
      return s;
    }
    default: return nullptr;
  }
}

Nanos parse_seconds(const YAML::Node& n, const std::string& where, const std::string& field) {
  return s_to_ns(as_double(n, where, field));
}

TypeSpec parse_type(const YAML::Node& n, const std::string& name_hint, const std::string& where,
                    const std::string& field, std::int64_t max_len) {
  TypeSpec t;
  if (n.IsScalar()) {  // map form: {qa: 3}
    t.name = name_hint;
    t.weight = as_double(n, where, field);
    return t;
  }
  if (!n.IsMap()) fail(where, n, field, "expected a map");
  static const char* const kKeys[] = {"name",   "weight",  "input",           "output",
                                      "instruction", "schema", "response_format", "tools",
                                      "ignore_eos"};
  detail::check_keys(n, where, field, kKeys);
  t.name = n["name"] ? as_string(n["name"], where, field + ".name") : name_hint;
  if (t.name.empty()) fail(where, n, field + ".name", "missing");
  if (n["weight"]) t.weight = as_double(n["weight"], where, field + ".weight");
  if (n["input"]) t.input = parse_dist(n["input"], where, field + ".input", max_len);
  if (n["output"]) t.output = parse_dist(n["output"], where, field + ".output", max_len);
  if (n["instruction"]) t.instruction = as_string(n["instruction"], where, field + ".instruction");
  if (n["schema"]) {
    const auto schema = yaml_to_json(n["schema"]);
    if (!schema.is_object()) fail(where, n["schema"], field + ".schema", "expected a JSON schema object");
    t.response_format_json = response_format_for_schema(schema).dump();
  }
  if (n["response_format"]) t.response_format_json = yaml_to_json(n["response_format"]).dump();
  if (n["tools"]) {
    const auto tools = yaml_to_json(n["tools"]);
    if (!tools.is_array()) fail(where, n["tools"], field + ".tools", "expected a list of tools");
    t.tools_json = tools.dump();
  }
  if (n["ignore_eos"]) t.ignore_eos = as_bool(n["ignore_eos"], where, field + ".ignore_eos");
  if (t.weight < 0) fail(where, n, field + ".weight", "must be >= 0");
  return t;
}

void parse_trace_spec(const YAML::Node& n, WorkloadConfig& cfg, const std::string& where,
                      const std::filesystem::path& base_dir) {
  TraceSpec ts;
  std::optional<TraceFormat> fmt;
  if (n.IsScalar()) {
    ts.file = n.Scalar();
  } else {
    if (!n.IsMap()) fail(where, n, "trace", "expected a file name or a map");
    static const char* const kKeys[] = {"file", "format", "speed", "window", "timestamps"};
    detail::check_keys(n, where, "trace", kKeys);
    if (!n["file"]) fail(where, n, "trace.file", "missing");
    ts.file = as_string(n["file"], where, "trace.file");
    if (n["format"]) {
      const auto f = as_string(n["format"], where, "trace.format");
      fmt = trace_format_from_string(f);
      if (!fmt) fail(where, n["format"], "trace.format", "unknown format '" + f + "' (azure|mooncake|burstgpt|sharegpt|inferscope)");
    }
    if (n["speed"]) {
      ts.speed = as_double(n["speed"], where, "trace.speed");
      if (!(ts.speed > 0)) fail(where, n["speed"], "trace.speed", "must be > 0");
    }
    if (n["window"]) {
      const auto& w = n["window"];
      if (!w.IsSequence() || w.size() != 2) fail(where, w, "trace.window", "expected [start_s, end_s]");
      ts.window_start_ns = parse_seconds(w[0], where, "trace.window");
      ts.window_end_ns = w[1].Scalar() == "end" ? -1 : parse_seconds(w[1], where, "trace.window");
      if (ts.window_start_ns < 0 || (ts.window_end_ns >= 0 && ts.window_end_ns <= ts.window_start_ns))
        fail(where, w, "trace.window", "needs 0 <= start < end");
    }
    if (n["timestamps"]) ts.timestamps = as_bool(n["timestamps"], where, "trace.timestamps");
  }
  // A relative trace path in a spec file is relative to the spec's directory.
  std::filesystem::path p(ts.file);
  if (p.is_relative() && !base_dir.empty() && !std::filesystem::exists(p)) ts.file = (base_dir / p).string();
  auto trace = read_trace(ts.file, fmt);
  ts.format = trace.format;
  apply_time_window(trace, ts.speed, ts.window_start_ns, ts.window_end_ns);
  cfg.trace = ts;
  cfg.trace_data = std::make_shared<const Trace>(std::move(trace));
}

void parse_spec(const YAML::Node& root, WorkloadConfig& cfg, const std::string& where,
                const std::filesystem::path& base_dir) {
  if (!root.IsMap()) fail(where, root, "", "a workload spec is a YAML map (e.g. '{input: 512, output: 128}')");
  static const char* const kKeys[] = {"input", "output", "max_len", "count", "ignore_eos", "types",
                                      "prefix", "sessions", "trace"};
  detail::check_keys(root, where, "", kKeys);
  if (root["max_len"]) {
    cfg.max_len = as_int(root["max_len"], where, "max_len");
    if (cfg.max_len < 1) fail(where, root["max_len"], "max_len", "must be >= 1");
    cfg.input.max = std::min(cfg.input.max, cfg.max_len);
    cfg.output.max = std::min(cfg.output.max, cfg.max_len);
  }
  if (root["input"]) {
    cfg.input = parse_dist(root["input"], where, "input", cfg.max_len);
    cfg.input_set = true;
  }
  if (root["output"]) {
    cfg.output = parse_dist(root["output"], where, "output", cfg.max_len);
    cfg.output_set = true;
  }
  if (root["count"]) {
    cfg.count = as_int(root["count"], where, "count");
    if (cfg.count < 1) fail(where, root["count"], "count", "must be >= 1");
  }
  if (root["ignore_eos"]) cfg.ignore_eos = as_bool(root["ignore_eos"], where, "ignore_eos");
  if (const auto& t = root["types"]) {
    if (t.IsSequence()) {
      for (std::size_t i = 0; i < t.size(); ++i)
        cfg.types.push_back(parse_type(t[i], "", where, "types[" + std::to_string(i) + "]", cfg.max_len));
    } else if (t.IsMap()) {
      for (const auto& kv : t)
        cfg.types.push_back(parse_type(kv.second, kv.first.Scalar(), where, "types." + kv.first.Scalar(), cfg.max_len));
    } else {
      fail(where, t, "types", "expected a list or a map of types");
    }
    double total = 0;
    for (const auto& ty : cfg.types) total += ty.weight;
    if (!(total > 0)) fail(where, t, "types", "weights must add up to more than 0");
  }
  if (const auto& p = root["prefix"]) {
    if (!p.IsMap()) fail(where, p, "prefix", "expected {tokens, share, distinct}");
    static const char* const kPrefixKeys[] = {"tokens", "share", "distinct"};
    detail::check_keys(p, where, "prefix", kPrefixKeys);
    if (p["tokens"]) cfg.prefix.tokens = as_int(p["tokens"], where, "prefix.tokens");
    if (p["share"]) cfg.prefix.share = as_double(p["share"], where, "prefix.share");
    if (p["distinct"]) cfg.prefix.distinct = as_int(p["distinct"], where, "prefix.distinct");
    if (cfg.prefix.tokens < 0 || cfg.prefix.tokens >= cfg.max_len) fail(where, p, "prefix.tokens", "must be in [0, max_len)");
    if (cfg.prefix.share < 0 || cfg.prefix.share > 1) fail(where, p, "prefix.share", "must be in [0, 1]");
    if (cfg.prefix.distinct < 1) fail(where, p, "prefix.distinct", "must be >= 1");
    if (!p["share"] && cfg.prefix.tokens > 0) cfg.prefix.share = 1.0;
  }
  if (const auto& s = root["sessions"]) {
    if (!s.IsMap()) fail(where, s, "sessions", "expected a map");
    static const char* const kSessKeys[] = {"turns", "followup_input", "tool_fraction", "tool_wait_ms",
                                            "tool_result_tokens", "think_ms"};
    detail::check_keys(s, where, "sessions", kSessKeys);
    auto& ss = cfg.sessions;
    if (s["turns"]) ss.turns = parse_dist(s["turns"], where, "sessions.turns", 1024);
    ss.turns.max = std::min<std::int64_t>(ss.turns.max, 1024);
    if (s["followup_input"]) ss.followup_input = parse_dist(s["followup_input"], where, "sessions.followup_input", cfg.max_len);
    if (s["tool_fraction"]) ss.tool_fraction = as_double(s["tool_fraction"], where, "sessions.tool_fraction");
    if (ss.tool_fraction < 0 || ss.tool_fraction > 1) fail(where, s["tool_fraction"], "sessions.tool_fraction", "must be in [0, 1]");
    // Waits may be 0 ms: their clamp starts at 0.
    auto wait_dist = [&](const char* key, LengthDist& d) {
      if (!s[key]) return;
      const auto& n = s[key];
      if (n.IsScalar()) {
        d = LengthDist::fixed_of(0);
        d.value = as_double(n, where, std::string("sessions.") + key);
        if (d.value < 0) fail(where, n, std::string("sessions.") + key, "must be >= 0");
        d.min = 0;
        d.max = std::max<std::int64_t>(d.max, static_cast<std::int64_t>(d.value));
      } else {
        d = parse_dist(n, where, std::string("sessions.") + key, 86'400'000);
        if (!n["clamp"] && !n["min"] && d.kind != DistKind::uniform) d.min = 0;
      }
    };
    wait_dist("tool_wait_ms", ss.tool_wait_ms);
    wait_dist("think_ms", ss.think_ms);
    if (s["tool_result_tokens"]) ss.tool_result_tokens = parse_dist(s["tool_result_tokens"], where, "sessions.tool_result_tokens", cfg.max_len);
  }
  if (root["trace"]) parse_trace_spec(root["trace"], cfg, where, base_dir);
}
}  // namespace

WorkloadConfig fixed_workload(std::int64_t input_len, std::int64_t output_len, std::int64_t max_len) {
  if (input_len < 1) throw InputError("--input-len", "must be >= 1");
  if (output_len < 1) throw InputError("--output-len", "must be >= 1");
  WorkloadConfig c;
  c.max_len = max_len;
  c.input = LengthDist::fixed_of(input_len);
  c.output = LengthDist::fixed_of(output_len);
  c.source = "fixed";
  return c;
}

WorkloadConfig parse_workload(const std::string& spec_or_file, const WorkloadDefaults& d) {
  WorkloadConfig cfg = fixed_workload(d.input_len, d.output_len, d.max_len);
  cfg.source = spec_or_file;
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool is_file = !spec_or_file.empty() && spec_or_file.find('\n') == std::string::npos &&
                       spec_or_file.front() != '{' && fs::is_regular_file(spec_or_file, ec);
  if (is_file && !(ends_with(spec_or_file, ".yaml") || ends_with(spec_or_file, ".yml"))) {
    auto trace = read_trace(spec_or_file);
    TraceSpec ts;
    ts.file = spec_or_file;
    ts.format = trace.format;
    cfg.trace = ts;
    cfg.trace_data = std::make_shared<const Trace>(std::move(trace));
    return cfg;
  }
  std::string text = spec_or_file;
  std::string where = "--workload";
  fs::path base_dir;
  if (is_file) {
    std::ifstream f(spec_or_file, std::ios::binary);
    if (!f) throw InputError(spec_or_file, "cannot read workload file");
    std::stringstream ss;
    ss << f.rdbuf();
    text = ss.str();
    where = spec_or_file;
    base_dir = fs::path(spec_or_file).parent_path();
  } else if (spec_or_file.find(':') == std::string::npos && spec_or_file.find('{') == std::string::npos) {
    throw InputError("--workload", 0, "", "'" + spec_or_file + "' is neither a file nor a YAML spec");
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw InputError(where, e.mark.line + 1, "", "YAML syntax error: " + e.msg);
  }
  parse_spec(root, cfg, where, base_dir);
  return cfg;
}

// ---- the session source ----

namespace {

// The effective shape of a type, defaults resolved (see TypeSpec).
struct ResolvedType {
  std::string name;
  double weight = 1;
  LengthDist input, output;
  std::string instruction, response_format_json, tools_json;
  bool ignore_eos = true;
};

std::vector<ResolvedType> resolve_types(const WorkloadConfig& cfg) {
  std::vector<ResolvedType> out;
  if (cfg.types.empty()) {
    out.push_back({"default", 1, cfg.input, cfg.output, "", "", "", cfg.ignore_eos});
    return out;
  }
  for (const auto& t : cfg.types) {
    const TypeDefaults def = type_defaults(t.name, cfg.max_len);
    ResolvedType r;
    r.name = t.name;
    r.weight = t.weight;
    r.input = t.input ? *t.input : cfg.input_set ? cfg.input : def.input.value_or(cfg.input);
    r.output = t.output ? *t.output : cfg.output_set ? cfg.output : def.output.value_or(cfg.output);
    r.instruction = !t.instruction.empty() ? t.instruction : def.instruction;
    r.response_format_json = !t.response_format_json.empty() ? t.response_format_json : def.response_format_json;
    r.tools_json = !t.tools_json.empty() ? t.tools_json : def.tools_json;
    r.ignore_eos = t.ignore_eos ? *t.ignore_eos : def.ignore_eos.value_or(cfg.ignore_eos);
    out.push_back(std::move(r));
  }
  return out;
}

std::size_t pick_type(const std::vector<ResolvedType>& types, Rng& rng) {
  double total = 0;
  for (const auto& t : types) total += t.weight;
  double x = rng.uniform01() * total;
  for (std::size_t i = 0; i < types.size(); ++i) {
    if (x < types[i].weight) return i;
    x -= types[i].weight;
  }
  return types.size() - 1;
}

// Marker index of (session, turn, part): distinct for every piece of text a run sends.
std::uint64_t text_index(std::uint64_t session_id, std::int64_t turn, int part) {
  return (session_id << 12) | (static_cast<std::uint64_t>(turn) << 2) | static_cast<std::uint64_t>(part);
}

int clamp_len(std::int64_t v, std::int64_t max_len) {
  return static_cast<int>(std::clamp<std::int64_t>(v, 1, std::min<std::int64_t>(max_len, INT32_MAX)));
}

GenRequest make_request(const ResolvedType& t, std::string text, int tokens, int max_tokens,
                        std::uint64_t session_id, std::int32_t turn) {
  GenRequest r;
  r.type = t.name;
  r.prompt = std::move(text);
  r.input_tokens = tokens;
  r.max_tokens = max_tokens;
  r.ignore_eos = t.ignore_eos;
  r.response_format_json = t.response_format_json;
  r.tools_json = t.tools_json;
  r.session_id = session_id;
  r.turn = turn;
  return r;
}

class SyntheticSource final : public SessionSource {
 public:
  SyntheticSource(const WorkloadConfig& cfg, std::uint64_t seed, const Tokenizer& tok)
      : cfg_(cfg), seed_(seed), synth_(tok, seed), types_(resolve_types(cfg)) {
    for (std::int64_t k = 0; k < (cfg.prefix.tokens > 0 ? cfg.prefix.distinct : 0); ++k)
      prefixes_.push_back(synth_.block(0x7072656669780000ULL + static_cast<std::uint64_t>(k),
                                       static_cast<int>(cfg.prefix.tokens)));
  }

  std::optional<SessionPlan> next() override {
    if (cfg_.count >= 0 && produced_ >= static_cast<std::uint64_t>(cfg_.count)) return std::nullopt;
    SessionPlan plan;
    plan.session_id = ++produced_;
    // One RNG per session: session i is the same whichever sessions were drawn before it,
    // so a schedule can be partitioned across generator processes.
    Rng rng(derive_seed(seed_, plan.session_id));
    const ResolvedType& t = types_[pick_type(types_, rng)];
    const auto turns = std::max<std::int64_t>(1, cfg_.sessions.turns.sample(rng));
    const bool is_session = turns > 1;
    const std::uint64_t sid = is_session ? plan.session_id : 0;

    std::string head;
    if (!prefixes_.empty() && rng.uniform01() < cfg_.prefix.share)
      head = prefixes_[rng.below(prefixes_.size())];
    const int in = clamp_len(t.input.sample(rng), cfg_.max_len);
    const int out = clamp_len(t.output.sample(rng), cfg_.max_len);
    auto b = synth_.build(head, text_index(plan.session_id, 0, 0), t.instruction, in);
    Turn t0;
    t0.req = make_request(t, std::move(b.text), b.tokens, out, sid, 0);
    plan.turns.push_back(std::move(t0));

    const auto& ss = cfg_.sessions;
    for (std::int64_t k = 1; k < turns; ++k) {
      Turn turn;
      const bool tool = rng.uniform01() < ss.tool_fraction;
      turn.wait_is_tool = tool;
      turn.wait_before_ns = ms_to_ns(static_cast<double>((tool ? ss.tool_wait_ms : ss.think_ms).sample(rng)));
      if (tool) {
        const int n = clamp_len(ss.tool_result_tokens.sample(rng), cfg_.max_len);
        turn.tool_result = synth_.build("", text_index(plan.session_id, k, 1), "", n).text;
      }
      const int fin = clamp_len(ss.followup_input.sample(rng), cfg_.max_len);
      const int fout = clamp_len(t.output.sample(rng), cfg_.max_len);
      auto f = synth_.build("", text_index(plan.session_id, k, 0), "", fin);
      turn.req = make_request(t, std::move(f.text), f.tokens, fout, sid, static_cast<std::int32_t>(k));
      plan.turns.push_back(std::move(turn));
    }
    return plan;
  }

 private:
  const WorkloadConfig cfg_;
  std::uint64_t seed_;
  PromptSynth synth_;
  std::vector<ResolvedType> types_;
  std::vector<std::string> prefixes_;
  std::uint64_t produced_ = 0;
};

// Groups trace requests into sessions: requests sharing a session key, ordered by turn;
// every other request is a session of one.
std::vector<std::vector<const TraceRequest*>> group_sessions(const Trace& tr) {
  std::vector<std::vector<const TraceRequest*>> out;
  std::map<std::string, std::size_t> by_key;
  for (const auto& r : tr.requests) {
    if (r.session.empty()) {
      out.push_back({&r});
      continue;
    }
    auto [it, fresh] = by_key.emplace(r.session, out.size());
    if (fresh) out.emplace_back();
    out[it->second].push_back(&r);
  }
  for (auto& s : out)
    std::stable_sort(s.begin(), s.end(), [](auto* a, auto* b) { return a->turn < b->turn; });
  return out;
}

class TraceSource final : public SessionSource {
 public:
  TraceSource(const WorkloadConfig& cfg, std::uint64_t seed, const Tokenizer& tok)
      : cfg_(cfg), seed_(seed), synth_(tok, seed), types_(resolve_types(cfg)),
        sessions_(group_sessions(*cfg.trace_data)) {
    timestamps_ = cfg.trace->timestamps &&
                  std::any_of(cfg.trace_data->requests.begin(), cfg.trace_data->requests.end(),
                              [](const auto& r) { return r.t_ns.has_value(); });
  }

  bool has_arrival_times() const override { return timestamps_; }

  std::optional<SessionPlan> next() override {
    const std::size_t limit = cfg_.count >= 0 ? std::min<std::size_t>(sessions_.size(), static_cast<std::size_t>(cfg_.count))
                                              : sessions_.size();
    if (pos_ >= limit) return std::nullopt;
    const auto& rows = sessions_[pos_++];
    SessionPlan plan;
    plan.session_id = pos_;
    Rng rng(derive_seed(seed_, plan.session_id));
    if (timestamps_ && rows.front()->t_ns) plan.arrival_ns = *rows.front()->t_ns;
    const bool is_session = rows.size() > 1;
    const std::uint64_t sid = is_session ? plan.session_id : 0;
    // A type drawn by weight gives a trace row its shape (schema, tools); lengths stay the trace's.
    const ResolvedType& drawn = types_[pick_type(types_, rng)];
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const TraceRequest& r = *rows[k];
      ResolvedType t = drawn;
      if (!r.type.empty()) {
        const auto it = std::find_if(types_.begin(), types_.end(), [&](const auto& x) { return x.name == r.type; });
        if (it != types_.end()) {
          t = *it;
        } else {
          t.name = r.type;
          t.response_format_json.clear();
          t.tools_json.clear();
          t.instruction.clear();
        }
      }
      const auto index = text_index(plan.session_id, static_cast<std::int64_t>(k), 0);
      int out = r.output_tokens > 0 ? clamp_len(r.output_tokens, cfg_.max_len)
                : !r.reply.empty()  ? clamp_len(synth_.tokenizer().count(r.reply), cfg_.max_len)
                                    : clamp_len(t.output.sample(rng), cfg_.max_len);
      std::string text;
      int tokens = 0;
      if (!r.prompt.empty()) {
        text = r.prompt;
        tokens = synth_.tokenizer().count(text);
      } else {
        const int in = clamp_len(r.input_tokens > 0 ? r.input_tokens : t.input.sample(rng), cfg_.max_len);
        if (!r.hash_ids.empty()) {
          // Identical hash ids become identical text, so a prefix cache sees the trace's reuse.
          const int bt = cfg_.trace_data->block_tokens;
          std::string head;
          int left = in;
          for (auto h : r.hash_ids) {
            if (left <= 0) break;
            const int n = std::min(left, bt);
            head += synth_.block(h, n);
            left -= n;
          }
          auto b = synth_.build(head, index, "", in);
          text = std::move(b.text);
          tokens = b.tokens;
        } else {
          auto b = synth_.build("", index, t.instruction, in);
          text = std::move(b.text);
          tokens = b.tokens;
        }
      }
      Turn turn;
      turn.req = make_request(t, std::move(text), tokens, out, sid, static_cast<std::int32_t>(k));
      if (k > 0) {
        turn.wait_before_ns = r.wait_ns;
        turn.wait_is_tool = r.wait_is_tool;
      }
      plan.turns.push_back(std::move(turn));
    }
    return plan;
  }

 private:
  const WorkloadConfig cfg_;
  std::uint64_t seed_;
  PromptSynth synth_;
  std::vector<ResolvedType> types_;
  std::vector<std::vector<const TraceRequest*>> sessions_;  // point into cfg_.trace_data
  std::size_t pos_ = 0;
  bool timestamps_ = false;
};

}  // namespace

std::unique_ptr<SessionSource> make_session_source(const WorkloadConfig& cfg, std::uint64_t seed,
                                                   const Tokenizer& tok) {
  if (cfg.trace_data) return std::make_unique<TraceSource>(cfg, seed, tok);
  return std::make_unique<SyntheticSource>(cfg, seed, tok);
}

nlohmann::json describe(const WorkloadConfig& cfg) {
  nlohmann::json j;
  j["source"] = cfg.source;
  j["max_len"] = cfg.max_len;
  j["count"] = cfg.count < 0 ? nlohmann::json(nullptr) : nlohmann::json(cfg.count);
  j["ignore_eos"] = cfg.ignore_eos;
  j["input"] = to_json(cfg.input);
  j["output"] = to_json(cfg.output);
  nlohmann::json types = nlohmann::json::array();
  for (const auto& t : resolve_types(cfg)) {
    nlohmann::json e = {{"name", t.name},
                        {"weight", t.weight},
                        {"input", to_json(t.input)},
                        {"output", to_json(t.output)},
                        {"ignore_eos", t.ignore_eos}};
    if (!t.response_format_json.empty()) e["response_format"] = nlohmann::json::parse(t.response_format_json);
    if (!t.tools_json.empty()) e["tools"] = nlohmann::json::parse(t.tools_json);
    types.push_back(std::move(e));
  }
  j["types"] = std::move(types);
  j["prefix"] = {{"tokens", cfg.prefix.tokens}, {"share", cfg.prefix.share}, {"distinct", cfg.prefix.distinct}};
  const auto& s = cfg.sessions;
  j["sessions"] = {{"turns", to_json(s.turns)},
                   {"followup_input", to_json(s.followup_input)},
                   {"tool_fraction", s.tool_fraction},
                   {"tool_wait_ms", to_json(s.tool_wait_ms)},
                   {"tool_result_tokens", to_json(s.tool_result_tokens)},
                   {"think_ms", to_json(s.think_ms)}};
  if (cfg.trace) {
    j["trace"] = {{"file", cfg.trace->file},
                  {"format", to_string(cfg.trace->format)},
                  {"speed", cfg.trace->speed},
                  {"window_s", {ns_to_s(cfg.trace->window_start_ns),
                                cfg.trace->window_end_ns < 0 ? nlohmann::json(nullptr)
                                                             : nlohmann::json(ns_to_s(cfg.trace->window_end_ns))}},
                  {"timestamps", cfg.trace->timestamps},
                  {"requests", cfg.trace_data ? cfg.trace_data->requests.size() : 0}};
  }
  return j;
}

}  // namespace inferscope::workload
