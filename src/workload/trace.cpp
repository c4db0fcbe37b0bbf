#include "inferscope/workload/trace.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "inferscope/core/errors.h"

namespace inferscope::workload {
namespace {

bool ends_with(std::string_view s, std::string_view suf) {
  return s.size() >= suf.size() && s.substr(s.size() - suf.size()) == suf;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '"')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '"')) s.remove_suffix(1);
  return s;
}

// Splits into lines (LF or CRLF), keeping 1-based numbers.
template <typename F>
void for_each_line(std::string_view content, F&& f) {
  int line = 0;
  std::size_t pos = 0;
  while (pos < content.size()) {
    auto nl = content.find('\n', pos);
    if (nl == std::string_view::npos) nl = content.size();
    std::string_view l = content.substr(pos, nl - pos);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    f(++line, l);
    pos = nl + 1;
  }
}

std::vector<std::string_view> split_csv(std::string_view l) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (true) {
    const auto c = l.find(',', pos);
    out.push_back(trim(l.substr(pos, c == std::string_view::npos ? std::string_view::npos : c - pos)));
    if (c == std::string_view::npos) break;
    pos = c + 1;
  }
  return out;
}

std::int64_t parse_tokens(std::string_view s, const std::string& where, int line, const std::string& field) {
  std::int64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 0 || v > 100'000'000)
    throw InputError(where, line, field, "expected a token count, got '" + std::string(s) + "'");
  return v;
}

double parse_number(std::string_view s, const std::string& where, int line, const std::string& field) {
  // from_chars for double is in GCC 12's libstdc++.
  double v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !(v >= 0) || v > 1e12)
    throw InputError(where, line, field, "expected a non-negative number, got '" + std::string(s) + "'");
  return v;
}

std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {  // H. Hinnant's algorithm
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// "2023-11-16 18:17:03.9799600" -> ns since the epoch (UTC; only differences matter).
Nanos parse_datetime(std::string_view s, const std::string& where, int line, const std::string& field) {
  auto bad = [&]() -> Nanos {
    throw InputError(where, line, field, "expected 'YYYY-MM-DD HH:MM:SS[.fraction]', got '" + std::string(s) + "'");
  };
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':')
    return bad();
  auto num = [&](std::size_t at, std::size_t n) -> std::int64_t {
    std::int64_t v = 0;
    const auto r = std::from_chars(s.data() + at, s.data() + at + n, v);
    if (r.ec != std::errc() || r.ptr != s.data() + at + n) bad();
    return v;
  };
  const auto y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2), se = num(17, 2);
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return bad();
  Nanos frac = 0;
  if (s.size() > 19) {
    if (s[19] != '.' || s.size() == 20) return bad();
    Nanos scale = 100'000'000;
    for (std::size_t i = 20; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') return bad();
      frac += (s[i] - '0') * scale;
      scale /= 10;
    }
  }
  const std::int64_t days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  return ((days * 24 + h) * 60 + mi) * 60 * kNsPerSec + se * kNsPerSec + frac;
}

std::size_t column(const std::vector<std::string_view>& header, std::string_view name, const std::string& where) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  throw InputError(where, 1, std::string(name), "missing column in the CSV header");
}

// A CSV trace with one request per line: a timestamp, input and output token columns.
struct LengthCsv {
  TraceFormat format;
  std::string_view ts, in, out;  // column names in the header
  bool skip_failed = false;      // drop lines with 0 input or 0 output tokens
};

// `parse_time(field, line)` turns the timestamp field into trace nanoseconds.
template <class ParseTime>
Trace parse_length_csv(std::string_view content, const std::string& where, const LengthCsv& c, ParseTime parse_time) {
  Trace t{where, c.format, 512, {}};
  std::vector<std::string_view> header;
  std::size_t c_ts = 0, c_in = 0, c_out = 0;
  for_each_line(content, [&](int line, std::string_view l) {
    if (line == 1) {
      header = split_csv(l);
      c_ts = column(header, c.ts, where);
      c_in = column(header, c.in, where);
      c_out = column(header, c.out, where);
      return;
    }
    if (l.empty()) return;
    const auto f = split_csv(l);
    if (f.size() != header.size())
      throw InputError(where, line, "", "expected " + std::to_string(header.size()) + " fields, got " + std::to_string(f.size()));
    TraceRequest r;
    r.line = line;
    r.t_ns = parse_time(f[c_ts], line);
    r.input_tokens = parse_tokens(f[c_in], where, line, std::string(c.in));
    r.output_tokens = parse_tokens(f[c_out], where, line, std::string(c.out));
    if (c.skip_failed && (r.output_tokens == 0 || r.input_tokens == 0)) return;
    t.requests.push_back(std::move(r));
  });
  if (header.empty()) throw InputError(where, 1, "", "empty file (expected a CSV header)");
  return t;
}

Trace parse_azure(std::string_view content, const std::string& where) {
  return parse_length_csv(content, where, {TraceFormat::azure, "TIMESTAMP", "ContextTokens", "GeneratedTokens"},
                          [&](std::string_view f, int line) { return parse_datetime(f, where, line, "TIMESTAMP"); });
}

Trace parse_burstgpt(std::string_view content, const std::string& where) {
  // BurstGPT logs failed requests with 0 response tokens; they carry no load to replay.
  return parse_length_csv(content, where,
                          {TraceFormat::burstgpt, "Timestamp", "Request tokens", "Response tokens", /*skip_failed=*/true},
                          [&](std::string_view f, int line) { return s_to_ns(parse_number(f, where, line, "Timestamp")); });
}

nlohmann::json parse_json_line(std::string_view l, const std::string& where, int line) {
  try {
    auto j = nlohmann::json::parse(l);
    if (!j.is_object()) throw InputError(where, line, "", "expected a JSON object per line");
    return j;
  } catch (const nlohmann::json::exception& e) {  // syntax errors and number overflow
    throw InputError(where, line, "", std::string("invalid JSON: ") + e.what());
  }
}

std::int64_t json_tokens(const nlohmann::json& j, const char* key, const std::string& where, int line, bool required) {
  if (!j.contains(key)) {
    if (required) throw InputError(where, line, key, "missing");
    return -1;
  }
  const auto& v = j[key];
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > 100'000'000)
    throw InputError(where, line, key, "expected a non-negative integer, got " + v.dump());
  return v.get<std::int64_t>();
}

double json_number(const nlohmann::json& j, const char* key, const std::string& where, int line) {
  const auto& v = j[key];
  if (!v.is_number() || !(v.get<double>() >= 0) || v.get<double>() > 1e15)
    throw InputError(where, line, key, "expected a non-negative number, got " + v.dump());
  return v.get<double>();
}

std::vector<std::uint64_t> json_hash_ids(const nlohmann::json& j, const std::string& where, int line) {
  std::vector<std::uint64_t> out;
  if (!j.contains("hash_ids")) return out;
  const auto& h = j["hash_ids"];
  if (!h.is_array()) throw InputError(where, line, "hash_ids", "expected an array of integers");
  for (const auto& e : h) {
    if (!e.is_number_integer() || e.get<std::int64_t>() < 0)
      throw InputError(where, line, "hash_ids", "expected non-negative integers, got " + e.dump());
    out.push_back(e.get<std::uint64_t>());
  }
  return out;
}

Trace parse_mooncake(std::string_view content, const std::string& where) {
  Trace t{where, TraceFormat::mooncake, 512, {}};
  for_each_line(content, [&](int line, std::string_view l) {
    if (trim(l).empty()) return;
    const auto j = parse_json_line(l, where, line);
    TraceRequest r;
    r.line = line;
    if (!j.contains("timestamp")) throw InputError(where, line, "timestamp", "missing");
    r.t_ns = ms_to_ns(json_number(j, "timestamp", where, line));
    r.input_tokens = json_tokens(j, "input_length", where, line, true);
    r.output_tokens = json_tokens(j, "output_length", where, line, true);
    r.hash_ids = json_hash_ids(j, where, line);
    t.requests.push_back(std::move(r));
  });
  return t;
}

Trace parse_inferscope(std::string_view content, const std::string& where) {
  Trace t{where, TraceFormat::inferscope, 512, {}};
  static const std::set<std::string> kKeys = {"t_ms", "input_tokens", "output_tokens", "prompt", "type", "session",
                                              "turn", "wait_ms", "tool", "hash_ids", "block_tokens"};
  for_each_line(content, [&](int line, std::string_view l) {
    if (trim(l).empty()) return;
    const auto j = parse_json_line(l, where, line);
    for (const auto& [k, v] : j.items())
      if (!kKeys.contains(k)) throw InputError(where, line, k, "unknown field");
    TraceRequest r;
    r.line = line;
    if (j.contains("block_tokens")) {  // a header-like row that only sets the block size
      const auto b = json_tokens(j, "block_tokens", where, line, true);
      if (b < 1) throw InputError(where, line, "block_tokens", "must be >= 1");
      t.block_tokens = static_cast<int>(b);
      if (j.size() == 1) return;
    }
    if (j.contains("t_ms")) r.t_ns = ms_to_ns(json_number(j, "t_ms", where, line));
    r.input_tokens = json_tokens(j, "input_tokens", where, line, false);
    r.output_tokens = json_tokens(j, "output_tokens", where, line, true);
    if (j.contains("prompt")) {
      if (!j["prompt"].is_string()) throw InputError(where, line, "prompt", "expected a string");
      r.prompt = j["prompt"].get<std::string>();
    }
    if (r.input_tokens < 0 && r.prompt.empty())
      throw InputError(where, line, "input_tokens", "missing (give input_tokens or prompt)");
    if (j.contains("type")) {
      if (!j["type"].is_string()) throw InputError(where, line, "type", "expected a string");
      r.type = j["type"].get<std::string>();
    }
    if (j.contains("session")) {
      const auto& s = j["session"];
      if (!s.is_string() && !s.is_number_integer()) throw InputError(where, line, "session", "expected a string or integer");
      r.session = s.is_string() ? s.get<std::string>() : s.dump();
    }
    if (j.contains("turn")) r.turn = static_cast<std::int32_t>(json_tokens(j, "turn", where, line, true));
    if (j.contains("wait_ms")) r.wait_ns = ms_to_ns(json_number(j, "wait_ms", where, line));
    if (j.contains("tool")) {
      if (!j["tool"].is_boolean()) throw InputError(where, line, "tool", "expected true or false");
      r.wait_is_tool = j["tool"].get<bool>();
    }
    r.hash_ids = json_hash_ids(j, where, line);
    t.requests.push_back(std::move(r));
  });
  return t;
}

int line_of_offset(std::string_view content, std::size_t off) {
  off = std::min(off, content.size());
  return 1 + static_cast<int>(std::count(content.begin(), content.begin() + static_cast<std::ptrdiff_t>(off), '\n'));
}

Trace parse_sharegpt(std::string_view content, const std::string& where) {
  Trace t{where, TraceFormat::sharegpt, 512, {}};
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(content);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(where, line_of_offset(content, e.byte), "", std::string("invalid JSON: ") + e.what());
  } catch (const nlohmann::json::exception& e) {  // number overflow
    throw InputError(where, 0, "", std::string("invalid JSON: ") + e.what());
  }
  if (!j.is_array()) throw InputError(where, 1, "", "expected a JSON array of conversations");
  for (std::size_t i = 0; i < j.size(); ++i) {
    const auto& c = j[i];
    const std::string field = "[" + std::to_string(i) + "]";
    if (!c.is_object()) throw InputError(where, 0, field, "expected a conversation object");
    const char* key = c.contains("conversations") ? "conversations" : "conversation";
    if (!c.contains(key) || !c[key].is_array()) throw InputError(where, 0, field + ".conversations", "missing or not an array");
    std::string id = c.contains("id") ? (c["id"].is_string() ? c["id"].get<std::string>() : c["id"].dump()) : "";
    id = "sharegpt:" + std::to_string(i) + ":" + id;
    std::int32_t turn = 0;
    TraceRequest* open = nullptr;
    const auto& msgs = c[key];
    for (std::size_t k = 0; k < msgs.size(); ++k) {
      const auto& m = msgs[k];
      const std::string mf = field + "." + key + "[" + std::to_string(k) + "]";
      if (!m.is_object()) throw InputError(where, 0, mf, "expected a message object");
      const auto& from = m.contains("from") ? m["from"] : m.contains("role") ? m["role"] : nlohmann::json();
      const auto& value = m.contains("value") ? m["value"] : m.contains("content") ? m["content"] : nlohmann::json();
      if (!from.is_string()) throw InputError(where, 0, mf + ".from", "missing or not a string");
      if (!value.is_string()) throw InputError(where, 0, mf + ".value", "missing or not a string");
      const std::string role = from.get<std::string>();
      if (role == "human" || role == "user") {
        t.requests.push_back({});
        open = &t.requests.back();
        open->prompt = value.get<std::string>();
        open->session = id;
        open->turn = turn++;
        open->line = 0;
      } else if (role == "system") {
        continue;
      } else if (open) {  // gpt, chatgpt, assistant, bard, bing, model: the reply
        open->reply = value.get<std::string>();
        open = nullptr;
      }
    }
  }
  // A human message with empty text is not a request.
  std::erase_if(t.requests, [](const TraceRequest& r) { return r.prompt.empty(); });
  return t;
}

// Offsets from the first arrival; stable order by arrival.
void normalise_times(Trace& t) {
  bool any = false, all = true;
  for (const auto& r : t.requests) {
    if (r.turn > 0 && !r.session.empty()) continue;  // later turns follow their session
    any = any || r.t_ns.has_value();
    all = all && r.t_ns.has_value();
  }
  if (!any) return;
  if (!all) {
    for (const auto& r : t.requests)
      if (!r.t_ns && !(r.turn > 0 && !r.session.empty()))
        throw InputError(t.where, r.line, "t_ms", "missing (some requests have timestamps, this one not)");
  }
  Nanos first = INT64_MAX;
  for (const auto& r : t.requests)
    if (r.t_ns) first = std::min(first, *r.t_ns);
  for (auto& r : t.requests)
    if (r.t_ns) *r.t_ns -= first;
  std::stable_sort(t.requests.begin(), t.requests.end(), [](const TraceRequest& a, const TraceRequest& b) {
    return a.t_ns.value_or(INT64_MAX) < b.t_ns.value_or(INT64_MAX);
  });
}

}  // namespace

std::string_view to_string(TraceFormat f) {
  switch (f) {
    case TraceFormat::azure: return "azure";
    case TraceFormat::mooncake: return "mooncake";
    case TraceFormat::burstgpt: return "burstgpt";
    case TraceFormat::sharegpt: return "sharegpt";
    case TraceFormat::inferscope: return "inferscope";
  }
  return "inferscope";
}

std::optional<TraceFormat> trace_format_from_string(std::string_view s) {
  for (auto f : {TraceFormat::azure, TraceFormat::mooncake, TraceFormat::burstgpt, TraceFormat::sharegpt,
                 TraceFormat::inferscope})
    if (to_string(f) == s) return f;
  return std::nullopt;
}

std::optional<TraceFormat> detect_trace_format(std::string_view path, std::string_view head) {
  if (ends_with(path, ".csv")) {
    if (head.find("ContextTokens") != std::string_view::npos) return TraceFormat::azure;
    if (head.find("Request tokens") != std::string_view::npos) return TraceFormat::burstgpt;
    return std::nullopt;
  }
  if (ends_with(path, ".jsonl")) {
    const auto first = head.substr(0, head.find('\n'));
    return first.find("\"hash_ids\"") != std::string_view::npos && first.find("\"input_length\"") != std::string_view::npos
               ? TraceFormat::mooncake
               : TraceFormat::inferscope;
  }
  if (ends_with(path, ".json")) return TraceFormat::sharegpt;
  return std::nullopt;
}

Trace parse_trace(std::string_view content, TraceFormat fmt, const std::string& where) {
  Trace t;
  switch (fmt) {
    case TraceFormat::azure: t = parse_azure(content, where); break;
    case TraceFormat::mooncake: t = parse_mooncake(content, where); break;
    case TraceFormat::burstgpt: t = parse_burstgpt(content, where); break;
    case TraceFormat::sharegpt: t = parse_sharegpt(content, where); break;
    case TraceFormat::inferscope: t = parse_inferscope(content, where); break;
  }
  normalise_times(t);
  return t;
}

Trace read_trace(const std::string& path, std::optional<TraceFormat> fmt) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(path, "cannot open trace file");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string content = ss.str();
  if (!fmt) fmt = detect_trace_format(path, std::string_view(content).substr(0, 4096));
  if (!fmt)
    throw InputError(path, 0, "format", "cannot tell the trace format; name it (azure|mooncake|burstgpt|sharegpt|inferscope)");
  auto t = parse_trace(content, *fmt, path);
  if (t.requests.empty()) throw InputError(path, "trace has no requests");
  return t;
}

void apply_time_window(Trace& trace, double speed, Nanos start_ns, Nanos end_ns) {
  std::set<std::string> dropped;
  std::vector<TraceRequest> kept;
  for (auto& r : trace.requests) {
    if (!r.t_ns) {
      if (r.session.empty() || !dropped.contains(r.session)) kept.push_back(std::move(r));
      continue;
    }
    const Nanos t = *r.t_ns;
    if (t < start_ns || (end_ns >= 0 && t >= end_ns)) {
      if (!r.session.empty()) dropped.insert(r.session);
      continue;
    }
    r.t_ns = static_cast<Nanos>(static_cast<double>(t - start_ns) / speed);
    kept.push_back(std::move(r));
  }
  trace.requests = std::move(kept);
}

}  // namespace inferscope::workload
