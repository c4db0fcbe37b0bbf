#include "inferscope/telemetry/prometheus.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

#include "inferscope/core/text.h"

namespace inferscope::telemetry {

std::string_view metric_type_name(MetricType t) {
  switch (t) {
    case MetricType::counter: return "counter";
    case MetricType::gauge: return "gauge";
    case MetricType::histogram: return "histogram";
    case MetricType::summary: return "summary";
    case MetricType::untyped: return "untyped";
  }
  return "untyped";
}

const std::string* Sample::label(std::string_view n) const {
  for (const auto& [k, v] : labels)
    if (k == n) return &v;
  return nullptr;
}

namespace {

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }
bool is_label_start(char c) { return is_name_start(c) && c != ':'; }
bool is_label_char(char c) { return is_label_start(c) || (c >= '0' && c <= '9'); }
bool is_blank(char c) { return c == ' ' || c == '\t'; }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Go's strconv.ParseFloat as Prometheus uses it, for the spellings engines emit.
std::optional<double> parse_float(std::string_view s) {
  if (s.empty()) return std::nullopt;
  bool negative = false;
  std::string_view body = s;
  if (body.front() == '+' || body.front() == '-') {
    negative = body.front() == '-';
    body.remove_prefix(1);
  }
  if (ascii_iequals(body, "inf") || ascii_iequals(body, "infinity"))
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  if (ascii_iequals(body, "nan")) return std::numeric_limits<double>::quiet_NaN();
  if (body.empty() || body.front() == '+' || body.front() == '-') return std::nullopt;
  double v = 0;
  const auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
  // from_chars reports out-of-range for denormals/huge values; a scrape is not the place
  // to fail on those, but anything unparsed is an error.
  if (ptr != body.data() + body.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    v = std::strtod(std::string(body).c_str(), nullptr);
  } else if (ec != std::errc()) {
    return std::nullopt;
  }
  return negative ? -v : v;
}

std::optional<MetricType> parse_type(std::string_view s) {
  if (s == "counter") return MetricType::counter;
  if (s == "gauge") return MetricType::gauge;
  if (s == "histogram") return MetricType::histogram;
  if (s == "summary") return MetricType::summary;
  if (s == "untyped" || s == "unknown") return MetricType::untyped;
  return std::nullopt;
}

std::string unescape_help(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == '\\' || s[i + 1] == 'n')) {
      out += s[i + 1] == 'n' ? '\n' : '\\';
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  std::expected<Scrape, ParseError> run() {
    std::size_t pos = 0;
    while (pos <= text_.size()) {
      std::size_t end = text_.find('\n', pos);
      if (end == std::string_view::npos) end = text_.size();
      std::string_view line = text_.substr(pos, end - pos);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      ++line_no_;
      if (auto err = parse_line(line)) return std::unexpected(*err);
      pos = end + 1;
    }
    return std::move(scrape_);
  }

 private:
  std::optional<ParseError> fail(std::string msg) const { return ParseError{line_no_, std::move(msg)}; }

  std::size_t family_index(std::string_view name) {
    auto it = index_.find(std::string(name));
    if (it != index_.end()) return it->second;
    scrape_.families.push_back(MetricFamily{std::string(name), MetricType::untyped, {}, {}});
    index_.emplace(std::string(name), scrape_.families.size() - 1);
    return scrape_.families.size() - 1;
  }

  std::optional<ParseError> parse_comment(std::string_view line) {
    std::size_t i = 1;
    while (i < line.size() && is_blank(line[i])) ++i;
    std::size_t kw_end = i;
    while (kw_end < line.size() && !is_blank(line[kw_end])) ++kw_end;
    const std::string_view keyword = line.substr(i, kw_end - i);
    if (keyword != "HELP" && keyword != "TYPE") return std::nullopt;  // plain comment
    i = kw_end;
    while (i < line.size() && is_blank(line[i])) ++i;
    std::size_t name_end = i;
    while (name_end < line.size() && is_name_char(line[name_end])) ++name_end;
    if (name_end == i || !is_name_start(line[i]))
      return fail(std::string(keyword) + " without a valid metric name");
    if (name_end < line.size() && !is_blank(line[name_end]))
      return fail("invalid character in metric name after " + std::string(keyword));
    const std::string_view name = line.substr(i, name_end - i);
    std::size_t rest = name_end;
    while (rest < line.size() && is_blank(line[rest])) ++rest;
    std::string_view tail = line.substr(rest);
    const std::size_t fi = family_index(name);
    MetricFamily& fam = scrape_.families[fi];
    if (keyword == "HELP") {
      fam.help = unescape_help(tail);
      return std::nullopt;
    }
    while (!tail.empty() && is_blank(tail.back())) tail.remove_suffix(1);
    const auto type = parse_type(tail);
    if (!type) return fail("unknown metric type '" + std::string(tail) + "'");
    if (typed_.contains(std::string(name))) return fail("second TYPE line for " + std::string(name));
    if (!fam.samples.empty()) return fail("TYPE for " + std::string(name) + " after its samples");
    fam.type = *type;
    typed_.insert({std::string(name), true});
    return std::nullopt;
  }

  // The family a sample belongs to: its own declared name, else the declared family
  // whose type owns the sample's suffix, else a new untyped family.
  std::size_t family_for(std::string_view sample) {
    if (typed_.contains(std::string(sample))) return index_.at(std::string(sample));
    struct Rule {
      std::string_view suffix;
      bool counter, histogram, summary;
    };
    static constexpr Rule rules[] = {
        {"_bucket", false, true, false}, {"_sum", false, true, true},  {"_count", false, true, true},
        {"_total", true, false, false},   {"_created", true, true, true},
    };
    for (const auto& r : rules) {
      if (!ends_with(sample, r.suffix)) continue;
      const std::string base(sample.substr(0, sample.size() - r.suffix.size()));
      if (!typed_.contains(base)) continue;
      const auto t = scrape_.families[index_.at(base)].type;
      if ((t == MetricType::counter && r.counter) || (t == MetricType::histogram && r.histogram) ||
          (t == MetricType::summary && r.summary))
        return index_.at(base);
    }
    return family_index(sample);
  }

  std::optional<ParseError> parse_sample(std::string_view line) {
    std::size_t i = 0;
    while (i < line.size() && is_name_char(line[i])) ++i;
    if (i == 0 || !is_name_start(line[0])) return fail("invalid metric name");
    Sample s;
    s.name = std::string(line.substr(0, i));
    while (i < line.size() && is_blank(line[i])) ++i;
    if (i < line.size() && line[i] == '{') {
      ++i;
      for (;;) {
        while (i < line.size() && is_blank(line[i])) ++i;
        if (i >= line.size()) return fail("unterminated label set");
        if (line[i] == '}') {
          ++i;
          break;
        }
        const std::size_t ln_start = i;
        while (i < line.size() && is_label_char(line[i])) ++i;
        if (i == ln_start || !is_label_start(line[ln_start])) return fail("invalid label name");
        std::string lname(line.substr(ln_start, i - ln_start));
        while (i < line.size() && is_blank(line[i])) ++i;
        if (i >= line.size() || line[i] != '=') return fail("expected '=' after label " + lname);
        ++i;
        while (i < line.size() && is_blank(line[i])) ++i;
        if (i >= line.size() || line[i] != '"') return fail("expected '\"' to open label value of " + lname);
        ++i;
        std::string value;
        bool closed = false;
        while (i < line.size()) {
          const char c = line[i++];
          if (c == '"') {
            closed = true;
            break;
          }
          if (c != '\\') {
            value += c;
            continue;
          }
          if (i >= line.size()) break;
          const char e = line[i++];
          if (e == '\\') value += '\\';
          else if (e == '"') value += '"';
          else if (e == 'n') value += '\n';
          else return fail(std::string("invalid escape sequence '\\") + e + "' in label " + lname);
        }
        if (!closed) return fail("unterminated label value of " + lname);
        if (s.label(lname)) return fail("duplicate label " + lname);
        s.labels.emplace_back(std::move(lname), std::move(value));
        while (i < line.size() && is_blank(line[i])) ++i;
        if (i < line.size() && line[i] == ',') {
          ++i;
          continue;
        }
        if (i < line.size() && line[i] == '}') {
          ++i;
          break;
        }
        return fail("expected ',' or '}' in label set");
      }
    }
    // The value follows blanks (after a label set the blanks are optional, as in
    // Prometheus' own parser).
    while (i < line.size() && is_blank(line[i])) ++i;
    if (i >= line.size()) return fail("missing value");
    if (i == s.name.size()) return fail("invalid character in metric name");
    std::size_t v_end = i;
    while (v_end < line.size() && !is_blank(line[v_end])) ++v_end;
    const auto value = parse_float(line.substr(i, v_end - i));
    if (!value) return fail("invalid value '" + std::string(line.substr(i, v_end - i)) + "'");
    s.value = *value;
    i = v_end;
    while (i < line.size() && is_blank(line[i])) ++i;
    if (i < line.size()) {
      std::size_t t_end = i;
      while (t_end < line.size() && !is_blank(line[t_end])) ++t_end;
      std::int64_t ts = 0;
      const auto [ptr, ec] = std::from_chars(line.data() + i, line.data() + t_end, ts);
      if (ec != std::errc() || ptr != line.data() + t_end)
        return fail("invalid timestamp '" + std::string(line.substr(i, t_end - i)) + "'");
      s.timestamp_ms = ts;
      i = t_end;
      while (i < line.size() && is_blank(line[i])) ++i;
      if (i < line.size()) return fail("unexpected text after the timestamp");
    }
    scrape_.families[family_for(s.name)].samples.push_back(std::move(s));
    return std::nullopt;
  }

  std::optional<ParseError> parse_line(std::string_view line) {
    std::size_t i = 0;
    while (i < line.size() && is_blank(line[i])) ++i;
    if (i == line.size()) return std::nullopt;
    line.remove_prefix(i);
    if (line.front() == '#') return parse_comment(line);
    return parse_sample(line);
  }

  std::string_view text_;
  int line_no_ = 0;
  Scrape scrape_;
  std::unordered_map<std::string, std::size_t> index_;
  std::unordered_map<std::string, bool> typed_;
};

bool same_bounds(const HistogramSeries& a, const HistogramSeries& b) {
  if (a.buckets.size() != b.buckets.size()) return false;
  for (std::size_t i = 0; i < a.buckets.size(); ++i)
    if (a.buckets[i].le != b.buckets[i].le) return false;
  return true;
}

}  // namespace

std::expected<Scrape, ParseError> parse_prometheus(std::string_view text) { return Parser(text).run(); }

const MetricFamily* Scrape::find(std::string_view name) const {
  const auto exact = [&](std::string_view n) -> const MetricFamily* {
    for (const auto& f : families)
      if (f.name == n) return &f;
    return nullptr;
  };
  if (const auto* f = exact(name)) return f;
  if (const auto* f = exact(std::string(name) + "_total"); f && f->type != MetricType::gauge) return f;
  if (ends_with(name, "_total"))
    if (const auto* f = exact(name.substr(0, name.size() - 6)); f && f->type == MetricType::counter) return f;
  return nullptr;
}

std::vector<HistogramSeries> histogram_series(const MetricFamily& family) {
  std::vector<HistogramSeries> out;
  std::map<Labels, std::size_t> index;  // labels sorted by name -> position in out
  std::vector<bool> has_count;
  const auto series_for = [&](const Sample& s) -> HistogramSeries& {
    Labels key;
    for (const auto& l : s.labels)
      if (l.first != "le") key.push_back(l);
    Labels sorted = key;
    std::sort(sorted.begin(), sorted.end());
    auto [it, inserted] = index.try_emplace(sorted, out.size());
    if (inserted) {
      out.push_back(HistogramSeries{std::move(key), {}, 0, 0});
      has_count.push_back(false);
    }
    return out[it->second];
  };
  for (const auto& s : family.samples) {
    if (ends_with(s.name, "_bucket")) {
      const std::string* le = s.label("le");
      if (!le) continue;
      const auto bound = parse_float(*le);
      if (!bound) continue;
      series_for(s).buckets.push_back(Bucket{*bound, s.value});
    } else if (ends_with(s.name, "_sum")) {
      series_for(s).sum = s.value;
    } else if (ends_with(s.name, "_count")) {
      auto& h = series_for(s);
      h.count = s.value;
      has_count[static_cast<std::size_t>(&h - out.data())] = true;
    }
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto& b = out[i].buckets;
    std::sort(b.begin(), b.end(), [](const Bucket& x, const Bucket& y) { return x.le < y.le; });
    if (!has_count[i] && !b.empty() && std::isinf(b.back().le)) out[i].count = b.back().count;
  }
  return out;
}

std::optional<HistogramSeries> merge_histograms(std::span<const HistogramSeries> series, std::size_t* skipped) {
  if (skipped) *skipped = 0;
  if (series.empty()) return std::nullopt;
  HistogramSeries merged = series.front();
  merged.labels.clear();
  for (std::size_t i = 1; i < series.size(); ++i) {
    if (!same_bounds(merged, series[i])) {
      if (skipped) ++*skipped;
      continue;
    }
    for (std::size_t b = 0; b < merged.buckets.size(); ++b) merged.buckets[b].count += series[i].buckets[b].count;
    merged.sum += series[i].sum;
    merged.count += series[i].count;
  }
  return merged;
}

double histogram_quantile(double q, std::span<const Bucket> buckets) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (buckets.size() < 2 || !std::isinf(buckets.back().le) || std::isnan(q)) return nan;
  if (q < 0) return -std::numeric_limits<double>::infinity();
  if (q > 1) return std::numeric_limits<double>::infinity();
  const double total = buckets.back().count;
  if (!(total > 0)) return nan;
  const double rank = q * total;
  // First bucket (excluding +Inf) whose cumulative count reaches the rank.
  std::size_t b = 0;
  while (b < buckets.size() - 1 && buckets[b].count < rank) ++b;
  if (b == buckets.size() - 1) return buckets[b - 1].le;
  if (b == 0 && buckets[0].le <= 0) return buckets[0].le;
  const double lower = b == 0 ? 0.0 : buckets[b - 1].le;
  const double below = b == 0 ? 0.0 : buckets[b - 1].count;
  const double in_bucket = buckets[b].count - below;
  if (!(in_bucket > 0)) return buckets[b].le;
  return lower + (buckets[b].le - lower) * ((rank - below) / in_bucket);
}

std::expected<HistogramDelta, std::string> histogram_delta(const HistogramSeries& start, const HistogramSeries& end) {
  if (!same_bounds(start, end)) return std::unexpected("bucket bounds changed between scrapes");
  HistogramDelta d;
  d.series = end;
  bool reset = end.count < start.count;
  for (std::size_t i = 0; i < end.buckets.size(); ++i)
    if (end.buckets[i].count < start.buckets[i].count) reset = true;
  if (reset) {
    d.reset = true;
    return d;
  }
  for (std::size_t i = 0; i < end.buckets.size(); ++i) d.series.buckets[i].count -= start.buckets[i].count;
  d.series.sum -= start.sum;
  d.series.count -= start.count;
  return d;
}

}  // namespace inferscope::telemetry
