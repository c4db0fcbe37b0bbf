#pragma once
// Private: minimal JSON text building for request bodies (no DOM, one growing string).
#include <cstdint>
#include <string>
#include <string_view>

namespace inferscope::jsonw {

// Appends `s` as a JSON string literal (quotes included). Control characters are
// escaped; bytes >= 0x80 are copied unchanged (the input is expected to be UTF-8).
void append_string(std::string& out, std::string_view s);
void append_int(std::string& out, std::int64_t v);

}  // namespace inferscope::jsonw
