#include "inferscope/telemetry/prometheus.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace inferscope::telemetry {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Prometheus, ParsesTypesHelpLabelsTimestampsAndSpecialValues) {
  const char* text =
      "# A plain comment\n"
      "# HELP http_requests_total Requests \\\\ served\\nsince start.\n"
      "# TYPE http_requests_total counter\n"
      "http_requests_total{method=\"post\",code=\"200\"} 1027 1395066363000\n"
      "http_requests_total{method=\"post\",code=\"400\"}    3   1395066363000\n"
      "\n"
      "# TYPE temp gauge\n"
      "temp{path=\"C:\\\\DIR\\\\FILE.TXT\",quote=\"say \\\"hi\\\"\",nl=\"a\\nb\"} -Inf\n"
      "temp{x=\"nan\"} NaN\n"
      "temp{x=\"big\"} +Inf\n"
      "temp{x=\"sci\",} 1.5e-3\r\n"
      "metric_without_timestamp_and_labels 12.47\n"
      "  \t\n";
  const auto r = parse_prometheus(text);
  ASSERT_TRUE(r) << r.error().line << ": " << r.error().message;
  ASSERT_EQ(r->families.size(), 3u);

  const auto& c = r->families[0];
  EXPECT_EQ(c.name, "http_requests_total");
  EXPECT_EQ(c.type, MetricType::counter);
  EXPECT_EQ(c.help, "Requests \\ served\nsince start.");
  ASSERT_EQ(c.samples.size(), 2u);
  EXPECT_EQ(*c.samples[0].label("code"), "200");
  EXPECT_EQ(c.samples[0].value, 1027);
  EXPECT_EQ(c.samples[1].value, 3);
  ASSERT_TRUE(c.samples[1].timestamp_ms);
  EXPECT_EQ(*c.samples[1].timestamp_ms, 1395066363000);

  const auto& g = r->families[1];
  EXPECT_EQ(g.type, MetricType::gauge);
  ASSERT_EQ(g.samples.size(), 4u);
  EXPECT_EQ(*g.samples[0].label("path"), "C:\\DIR\\FILE.TXT");
  EXPECT_EQ(*g.samples[0].label("quote"), "say \"hi\"");
  EXPECT_EQ(*g.samples[0].label("nl"), "a\nb");
  EXPECT_EQ(g.samples[0].value, -kInf);
  EXPECT_TRUE(std::isnan(g.samples[1].value));
  EXPECT_EQ(g.samples[2].value, kInf);
  EXPECT_DOUBLE_EQ(g.samples[3].value, 0.0015);
  EXPECT_FALSE(g.samples[3].timestamp_ms);

  const auto& u = r->families[2];
  EXPECT_EQ(u.name, "metric_without_timestamp_and_labels");
  EXPECT_EQ(u.type, MetricType::untyped);
  EXPECT_EQ(u.samples[0].value, 12.47);
}

TEST(Prometheus, GroupsSuffixesIntoFamilies) {
  const char* text =
      "# TYPE rpc_duration_seconds summary\n"
      "rpc_duration_seconds{quantile=\"0.5\"} 4773\n"
      "rpc_duration_seconds{quantile=\"0.99\"} 76656\n"
      "rpc_duration_seconds_sum 1.7560473e+07\n"
      "rpc_duration_seconds_count 2693\n"
      "rpc_duration_seconds_created 1.7e9\n"
      "# TYPE req_latency histogram\n"
      "req_latency_bucket{le=\"0.1\"} 2\n"
      "req_latency_bucket{le=\"+Inf\"} 5\n"
      "req_latency_sum 1.5\n"
      "req_latency_count 5\n"
      "# TYPE tokens counter\n"
      "tokens_total 10\n"
      "tokens_created 1.7e9\n"
      "stray_sum 4\n";
  const auto r = parse_prometheus(text);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->families.size(), 4u);
  EXPECT_EQ(r->families[0].samples.size(), 5u);
  EXPECT_EQ(r->families[1].samples.size(), 4u);
  EXPECT_EQ(r->families[2].name, "tokens");
  EXPECT_EQ(r->families[2].samples.size(), 2u);
  // No TYPE for "stray": an untyped family of its own.
  EXPECT_EQ(r->families[3].name, "stray_sum");
  EXPECT_EQ(r->families[3].type, MetricType::untyped);

  // Counter look-ups with and without _total.
  EXPECT_EQ(r->find("tokens"), &r->families[2]);
  EXPECT_EQ(r->find("tokens_total"), &r->families[2]);
  EXPECT_EQ(r->find("missing"), nullptr);
}

TEST(Prometheus, FindsCountersDeclaredWithTotal) {
  const auto r = parse_prometheus("# TYPE a_total counter\na_total 7\n");
  ASSERT_TRUE(r);
  ASSERT_NE(r->find("a"), nullptr);
  EXPECT_EQ(r->find("a")->samples[0].value, 7);
}

TEST(Prometheus, ReportsErrorsWithLineNumbers) {
  struct Case {
    const char* text;
    int line;
  };
  const Case cases[] = {
      {"ok 1\nbad{a=\"x\\q\"} 1\n", 2},             // invalid escape
      {"x 1\n\nnovalue\n", 3},                      // missing value
      {"# TYPE a gauge\n# TYPE a counter\n", 2},    // second TYPE
      {"# TYPE a sometype\n", 1},                   // unknown type
      {"a{1b=\"x\"} 1\n", 1},                       // bad label name
      {"a{b=\"x\" 1\n", 1},                         // unterminated label set
      {"a{b=\"x\"} 1 12x\n", 1},                    // bad timestamp
      {"a 1 2 3\n", 1},                             // trailing text
      {"a{b=\"x\",b=\"y\"} 1\n", 1},                // duplicate label
      {"a one\n", 1},                               // bad value
      {"a 1\n# TYPE a gauge\n", 2},                 // TYPE after samples
  };
  for (const auto& c : cases) {
    const auto r = parse_prometheus(c.text);
    ASSERT_FALSE(r) << c.text;
    EXPECT_EQ(r.error().line, c.line) << c.text << " -> " << r.error().message;
  }
}

HistogramSeries series(std::vector<Bucket> b, double sum) {
  HistogramSeries h;
  h.buckets = std::move(b);
  h.sum = sum;
  h.count = h.buckets.back().count;
  return h;
}

TEST(Prometheus, HistogramSeriesSplitsByLabelsAndSortsBuckets) {
  const char* text =
      "# TYPE d histogram\n"
      "d_bucket{m=\"a\",le=\"+Inf\"} 4\n"
      "d_bucket{m=\"a\",le=\"1\"} 3\n"
      "d_bucket{le=\"1\",m=\"b\"} 1\n"
      "d_bucket{le=\"+Inf\",m=\"b\"} 2\n"
      "d_sum{m=\"a\"} 2.5\n"
      "d_count{m=\"a\"} 4\n"
      "d_sum{m=\"b\"} 9\n";
  const auto r = parse_prometheus(text);
  ASSERT_TRUE(r);
  const auto s = histogram_series(r->families[0]);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(*s[0].labels.begin(), (std::pair<std::string, std::string>{"m", "a"}));
  ASSERT_EQ(s[0].buckets.size(), 2u);
  EXPECT_EQ(s[0].buckets[0].le, 1);
  EXPECT_EQ(s[0].buckets[1].le, kInf);
  EXPECT_EQ(s[0].count, 4);
  EXPECT_EQ(s[0].sum, 2.5);
  EXPECT_EQ(s[1].count, 2);  // no _count: taken from the +Inf bucket
  EXPECT_EQ(s[1].sum, 9);

  std::size_t skipped = 9;
  const auto m = merge_histograms(s, &skipped);
  ASSERT_TRUE(m);
  EXPECT_EQ(skipped, 0u);
  EXPECT_EQ(m->buckets[0].count, 4);
  EXPECT_EQ(m->buckets[1].count, 6);
  EXPECT_EQ(m->count, 6);
  EXPECT_EQ(m->sum, 11.5);
}

TEST(Prometheus, MergeSkipsSeriesWithOtherBounds) {
  const std::vector<HistogramSeries> s = {series({{1, 1}, {kInf, 2}}, 1), series({{2, 1}, {kInf, 2}}, 1)};
  std::size_t skipped = 0;
  const auto m = merge_histograms(s, &skipped);
  EXPECT_EQ(skipped, 1u);
  EXPECT_EQ(m->count, 2);
}

TEST(Prometheus, QuantileInterpolatesLikeHistogramQuantile) {
  // 100 observations: 10 in (0.02,0.04], 30 in (0.04,0.06], 30 in (0.06,0.08], 20 in
  // (0.08,0.1], 8 in (0.1,0.25], 2 in (0.25,0.5].
  const std::vector<Bucket> b = {{0.02, 0}, {0.04, 10}, {0.06, 40}, {0.08, 70},
                                 {0.1, 90}, {0.25, 98}, {0.5, 100}, {kInf, 100}};
  EXPECT_NEAR(histogram_quantile(0.50, b), 0.06 + 0.02 * 10.0 / 30.0, 1e-12);
  EXPECT_NEAR(histogram_quantile(0.95, b), 0.1 + 0.15 * 5.0 / 8.0, 1e-12);
  EXPECT_NEAR(histogram_quantile(0.99, b), 0.25 + 0.25 * 1.0 / 2.0, 1e-12);
  // Rank 5 lies in the bucket (0.02, 0.04]: first non-empty bucket after an empty one.
  EXPECT_NEAR(histogram_quantile(0.05, b), 0.02 + 0.02 * 5.0 / 10.0, 1e-12);

  // First bucket interpolates from 0.
  const std::vector<Bucket> first = {{2, 4}, {kInf, 4}};
  EXPECT_DOUBLE_EQ(histogram_quantile(0.5, first), 1.0);
  // A rank in the +Inf bucket answers the highest finite bound.
  const std::vector<Bucket> tail = {{1, 1}, {2, 2}, {kInf, 10}};
  EXPECT_DOUBLE_EQ(histogram_quantile(0.9, tail), 2.0);
  // Degenerate inputs.
  EXPECT_TRUE(std::isnan(histogram_quantile(0.5, std::vector<Bucket>{{1, 0}, {kInf, 0}})));
  EXPECT_TRUE(std::isnan(histogram_quantile(0.5, std::vector<Bucket>{{1, 3}, {2, 3}})));
  EXPECT_TRUE(std::isnan(histogram_quantile(0.5, std::vector<Bucket>{{kInf, 3}})));
  EXPECT_EQ(histogram_quantile(1.5, b), kInf);
}

TEST(Prometheus, DeltaSubtractsBucketsAndDetectsResets) {
  const auto start = series({{0.1, 5}, {0.5, 8}, {kInf, 10}}, 2.0);
  const auto end = series({{0.1, 15}, {0.5, 28}, {kInf, 30}}, 9.0);
  const auto d = histogram_delta(start, end);
  ASSERT_TRUE(d);
  EXPECT_FALSE(d->reset);
  EXPECT_EQ(d->series.buckets[0].count, 10);
  EXPECT_EQ(d->series.buckets[1].count, 20);
  EXPECT_EQ(d->series.buckets[2].count, 20);
  EXPECT_EQ(d->series.count, 20);
  EXPECT_DOUBLE_EQ(d->series.sum, 7.0);
  // 20 observations in the window: rank 10 is the last in (0, 0.1].
  EXPECT_DOUBLE_EQ(histogram_quantile(0.5, d->series.buckets), 0.1);

  const auto restarted = series({{0.1, 1}, {0.5, 1}, {kInf, 2}}, 0.3);
  const auto r = histogram_delta(end, restarted);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->reset);
  EXPECT_EQ(r->series.count, 2);

  EXPECT_FALSE(histogram_delta(start, series({{0.2, 1}, {0.5, 1}, {kInf, 2}}, 0)));
}

}  // namespace
}  // namespace inferscope::telemetry
