// Blocking control-plane HTTP calls, the API key loader, and the libcurl options shared
// with the streaming transport.
#include "client/http_common.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <mutex>

#include "inferscope/client/http_target.h"
#include "inferscope/core/errors.h"

namespace inferscope {

namespace http_detail {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

void common_options(CURL* e, bool verify_tls, const std::string& ca_file,
                    const std::optional<std::string>& proxy) {
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);  // multi-threaded process: no SIGALRM for DNS
  curl_easy_setopt(e, CURLOPT_VERBOSE, 0L);   // debug output would print the Authorization header
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, verify_tls ? 1L : 0L);
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, verify_tls ? 2L : 0L);
  if (!ca_file.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, ca_file.c_str());
  if (proxy) curl_easy_setopt(e, CURLOPT_PROXY, proxy->c_str());
  curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool header_is(std::string_view line, std::string_view name) {
  const auto colon = line.find(':');
  if (colon == std::string_view::npos || colon != name.size()) return false;
  return std::equal(name.begin(), name.end(), line.begin(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
}

std::string header_value(std::string_view line) {
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return {};
  return std::string(trim(line.substr(colon + 1)));
}

}  // namespace http_detail

namespace {

std::size_t append_body(char* data, std::size_t size, std::size_t n, void* userp) {
  static_cast<std::string*>(userp)->append(data, size * n);
  return size * n;
}

HttpResponse perform(const std::string& url, const std::string* post_body, double timeout_s,
                     const std::string& api_key, bool verify_tls) {
  http_detail::global_init();
  HttpResponse out;
  CURL* e = curl_easy_init();
  if (e == nullptr) {
    out.error = "curl_easy_init failed";
    return out;
  }
  char errbuf[CURL_ERROR_SIZE] = {};
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Expect:");
  if (post_body != nullptr) headers = curl_slist_append(headers, "Content-Type: application/json");
  if (!api_key.empty()) {
    const std::string auth = "Authorization: Bearer " + api_key;
    headers = curl_slist_append(headers, auth.c_str());
  }
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
  http_detail::common_options(e, verify_tls, "", std::nullopt);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_s * 1000.0));
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &append_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &out.body);
  if (post_body != nullptr) {
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, post_body->data());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(post_body->size()));
  }
  const CURLcode rc = curl_easy_perform(e);
  if (rc == CURLE_OK) {
    long status = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    out.status = static_cast<int>(status);
    const char* ct = nullptr;
    if (curl_easy_getinfo(e, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct != nullptr) {
      out.content_type = ct;
    }
  } else {
    out.error = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(rc);
    out.body.clear();
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(e);
  return out;
}

}  // namespace

HttpResponse http_get(const std::string& url, double timeout_s, const std::string& api_key,
                      bool verify_tls) {
  return perform(url, nullptr, timeout_s, api_key, verify_tls);
}

HttpResponse http_post_json(const std::string& url, const std::string& body, double timeout_s,
                            const std::string& api_key, bool verify_tls) {
  return perform(url, &body, timeout_s, api_key, verify_tls);
}

std::string load_api_key(const std::string& env_name, const std::string& file) {
  if (!env_name.empty()) {
    if (const char* v = std::getenv(env_name.c_str()); v != nullptr && *v != '\0') {
      return std::string(http_detail::trim(v));
    }
  }
  if (file.empty()) return {};
  std::ifstream in(file);
  if (!in) throw InputError(file, 0, "api_key_file", "cannot read the API key file");
  std::string line;
  std::getline(in, line);
  // Only the first line, trimmed; the key itself never appears in a message.
  return std::string(http_detail::trim(line));
}

}  // namespace inferscope
