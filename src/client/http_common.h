#pragma once
// Private helpers shared by the libcurl transport (http_target.cpp) and the blocking
// control-plane calls (http_common.cpp).
#include <curl/curl.h>

#include <optional>
#include <string>
#include <string_view>

namespace inferscope::http_detail {

// curl_global_init, once per process, thread-safe.
void global_init();

// Options every handle gets: TLS verification (on unless verify_tls is false), CA bundle,
// proxy, no signals, TCP keep-alive, no debug output.
void common_options(CURL* e, bool verify_tls, const std::string& ca_file,
                    const std::optional<std::string>& proxy);

// `s` without leading and trailing whitespace.
std::string_view trim(std::string_view s);

// For a raw header line "Name: value\r\n": whether its name is `name` (case-insensitive)
// and its value without surrounding whitespace.
bool header_is(std::string_view line, std::string_view name);
std::string header_value(std::string_view line);

}  // namespace inferscope::http_detail
