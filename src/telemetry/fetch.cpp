#include <fstream>
#include <sstream>

#include "inferscope/client/http_target.h"
#include "inferscope/telemetry/sampler.h"

namespace inferscope::telemetry {

FetchResult http_fetch(const std::string& url, double timeout_s) {
  const HttpResponse r = http_get(url, timeout_s);
  FetchResult out;
  if (r.status == 0) {
    out.error = r.error.empty() ? "no response" : r.error;
  } else if (r.status < 200 || r.status >= 300) {
    out.error = "HTTP " + std::to_string(r.status);
  } else {
    out.ok = true;
    out.body = r.body;
  }
  return out;
}

FetchResult fetch_url_or_file(const std::string& where, double timeout_s) {
  if (where.starts_with("http://") || where.starts_with("https://")) return http_fetch(where, timeout_s);
  FetchResult out;
  std::ifstream in(where, std::ios::binary);
  if (!in) {
    out.error = "cannot read " + where;
    return out;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  out.ok = true;
  out.body = ss.str();
  return out;
}

}  // namespace inferscope::telemetry
