#pragma once
// The HTTP target: drives thousands of concurrent streaming requests from one event loop
// (libcurl multi-socket API on epoll; see docs/client-transport.md for why), with connection
// reuse, HTTPS with verification on by default, and per-request DNS / connect / TLS /
// first-byte timings.
#include <memory>
#include <optional>
#include <string>

#include "inferscope/client/protocol.h"
#include "inferscope/core/target.h"

namespace inferscope {

struct HttpTargetOptions {
  std::string base_url;  // "http://127.0.0.1:8000" or "https://host"; no trailing path
  ApiKind api = ApiKind::completions;
  ProtocolOptions protocol;
  std::string api_key;          // sent as "Authorization: Bearer …"; never logged or stored
  Nanos idle_timeout_ns = 60 * kNsPerSec;  // no byte for this long => ErrorClass::timeout
  Nanos total_timeout_ns = 0;   // whole-request cap; 0 = none
  Nanos connect_timeout_ns = 10 * kNsPerSec;
  bool verify_tls = true;
  std::string ca_file;          // extra CA bundle; empty = system default
  // nullopt: libcurl's default (http_proxy/https_proxy/no_proxy from the environment);
  // "": never use a proxy; else the proxy URL.
  std::optional<std::string> proxy;
  const TokenCounter* counter = nullptr;  // not owned; outlives the target
};

// The target reads timestamps from `clock`, which must read CLOCK_MONOTONIC
// (SteadyClock): poll() sleeps until its deadline on a CLOCK_MONOTONIC timerfd. Not
// thread-safe: one load-loop thread drives it (see Target). Every body read is stamped
// with clock.now_ns() as it arrives and fed to the request's StreamDecoder.
std::unique_ptr<Target> make_http_target(const HttpTargetOptions& opt, const Clock& clock);

// The API key from the environment variable `env_name` (if set and non-empty) or else
// from the first line of `file` (if non-empty). Throws InputError if a named file can't
// be read. Returns empty when neither is given.
std::string load_api_key(const std::string& env_name, const std::string& file);

// Small blocking helpers for control-plane calls (/metrics, /tokenize, /health).
// Not for the measured hot path.
struct HttpResponse {
  int status = 0;       // 0 when the request failed before any response
  std::string body;
  std::string error;    // transport error text when status == 0
  std::string content_type;
};
HttpResponse http_get(const std::string& url, double timeout_s = 10.0,
                      const std::string& api_key = "", bool verify_tls = true);
HttpResponse http_post_json(const std::string& url, const std::string& body,
                            double timeout_s = 10.0, const std::string& api_key = "",
                            bool verify_tls = true);

}  // namespace inferscope
