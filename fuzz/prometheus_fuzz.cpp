// libFuzzer target: the Prometheus text parser, the histogram helpers and the engine maps
// must never crash or hang on any page (a scrape is untrusted input from the network).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "inferscope/telemetry/engine_map.h"
#include "inferscope/telemetry/prometheus.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace inferscope::telemetry;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto parsed = parse_prometheus(text);
  if (!parsed) return 0;
  for (const auto& f : parsed->families) {
    const auto series = histogram_series(f);
    if (const auto merged = merge_histograms(series)) {
      (void)histogram_quantile(0.5, merged->buckets);
      (void)histogram_quantile(0.99, merged->buckets);
      (void)histogram_delta(*merged, series.front());
    }
  }
  (void)normalize(*parsed);
  return 0;
}
