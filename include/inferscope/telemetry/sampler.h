#pragma once
// TelemetrySampler: samples engine metrics, GPUs, the host and the client on its own
// thread at a fixed interval, every reading stamped on the run's Clock, and summarises
// them for summary.json.
//
// Usage (bench/run):
//   TelemetrySampler tel(cfg, clock);
//   tel.start();                 // opens probes, says once what is missing, starts the thread
//   ... on_measure_start: tel.mark_window_start();
//   ... on_measure_end:   tel.mark_window_end();
//   tel.stop();
//   summary["telemetry"] = tel.summary();  manifest["telemetry"] = tel.manifest();
//   tel.write_jsonl(dir / "telemetry.jsonl", origin);
//
// Threading: every method may be called from any thread. mark_window_* never block on
// I/O: they stamp the edge and wake the sampler thread, which takes the engine snapshot
// at once (so calling them from the load loop's callbacks is safe). The load loop's only
// other contact is ClientStats (atomics).
// Virtual clocks: start() starts no thread when clock.is_virtual(); the driver calls
// sample_once() at the virtual instants it wants sampled, and mark_window_* scrape the
// engine on the caller's thread.
#include <condition_variable>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "inferscope/core/clock.h"
#include "inferscope/telemetry/client_stats.h"
#include "inferscope/telemetry/engine_map.h"
#include "inferscope/telemetry/gpu.h"
#include "inferscope/telemetry/host.h"

namespace inferscope::telemetry {

// The body of a metrics page, or why there is none.
struct FetchResult {
  bool ok = false;
  std::string body;   // when ok
  std::string error;  // when !ok: transport error or "HTTP <status>"
};
using TextFetcher = std::function<FetchResult(const std::string& url)>;
// Blocking GET through the client module's http_get; non-2xx is an error.
FetchResult http_fetch(const std::string& url, double timeout_s);
// http_fetch for http(s):// URLs, else reads the string as a file path.
FetchResult fetch_url_or_file(const std::string& where, double timeout_s);

struct TelemetryConfig {
  Nanos interval_ns = kNsPerSec;  // sampling period (> 0)
  std::string metrics_url;        // engine Prometheus endpoint; empty: no engine series
  Engine engine = Engine::unknown;  // unknown: detect from the first page
  double fetch_timeout_s = 2.0;
  TextFetcher fetch;              // empty: http_fetch(url, fetch_timeout_s)
  GpuBackend gpu = GpuBackend::automatic;
  bool host = true;               // /proc CPU, memory, network
  std::string proc_root = "/proc";
  ClientStats* client = nullptr;  // not owned; must outlive the sampler
  std::size_t max_samples = 1'000'000;  // per sampler; older samples are kept, newer dropped
  std::function<void(const std::string&)> log;  // one-line notices (GPU absent, engine
                                                // unreachable); empty: stderr
};

class TelemetrySampler {
 public:
  // `clock` must outlive the sampler. Throws InputError for interval_ns <= 0.
  TelemetrySampler(TelemetryConfig cfg, const Clock& clock);
  ~TelemetrySampler();  // stops the thread
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;

  void start();
  void stop();  // idempotent; joins the thread
  // One round of every source at clock.now_ns(). The thread calls it each interval.
  void sample_once();
  // Window edges: engine snapshot for histogram and counter deltas; the summary's series
  // statistics cover [start, end] when both are marked, else every sample.
  void mark_window_start();
  void mark_window_end();

  // {"interval_s", "samples": {source: n}, "window": {...}, "engine": {...},
  //  "series": {"<source>.<name>": {"n","mean","max","last"}}, "engine_counters":
  //  {key: {"start","end","delta"}}, "engine_histograms": {key: {"count","sum","mean",
  //  "p50","p95","p99","buckets","reset"}}, "notes": [...]}
  nlohmann::json summary() const;
  // {"gpu_backend", "driver_version", "gpus": [GpuInfo...], "changed_during_run": [...],
  //  "engine", "metrics_url", "interval_s"}
  nlohmann::json manifest() const;
  // One JSON object per line: {"t": ns - origin, "source": "engine|gpu|host|client", ...}.
  // Throws InputError when the file cannot be written.
  void write_jsonl(const std::filesystem::path& path, Nanos origin = 0) const;

  // One stored reading (exposed for tests and the in-process simulator).
  struct Record {
    Nanos t = 0;
    std::string source;  // engine | gpu | host | client
    int device = -1;     // GPU index for gpu records
    Values values;
  };
  std::vector<Record> records() const;

 private:
  struct EngineSnapshot {
    Nanos t = 0;
    NormalizedScrape scrape;
  };
  void run();
  // Sampling state below the sources_mu_ line is touched only with sources_mu_ held.
  void round(Nanos t);
  std::optional<EngineSnapshot> scrape_engine(Nanos t);
  void take_window_snapshot(bool start);
  void mark_window(bool start);
  void note(const std::string& msg);  // logs once per distinct message
  void add(Record r);

  TelemetryConfig cfg_;
  const Clock& clock_;

  // Shared with callers; short critical sections only.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool started_ = false;
  bool threaded_ = false;
  bool want_start_snapshot_ = false, want_end_snapshot_ = false;
  std::optional<Nanos> t_window_start_, t_window_end_;
  std::optional<EngineSnapshot> window_start_, window_end_, first_snapshot_, last_snapshot_;
  std::vector<Record> records_;
  std::size_t dropped_ = 0;
  std::vector<std::string> notes_;
  Engine engine_ = Engine::unknown;
  bool engine_detected_ = false;
  std::size_t engine_ok_ = 0, engine_errors_ = 0;
  std::string gpu_backend_ = "none";
  std::string driver_version_;
  std::vector<GpuInfo> gpu_info_start_;
  std::vector<std::string> gpu_changes_;
  std::thread thread_;

  // Sources: one sampling round at a time.
  std::mutex sources_mu_;
  std::unique_ptr<GpuProbe> gpu_;
  std::optional<HostSampler> host_;
  std::optional<Nanos> prev_client_t_;
  Nanos prev_proc_cpu_ = 0;
  std::optional<Nanos> prev_loop_cpu_;
};

}  // namespace inferscope::telemetry
