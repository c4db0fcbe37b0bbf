#pragma once
// Private UTF-8 helpers for the stream decoders. Pure functions, no allocation unless an
// output string is passed.
#include <cstddef>
#include <string>
#include <string_view>

namespace inferscope::utf8 {

// Length of the trailing bytes of `s` that form the start of a multi-byte character
// whose remaining continuation bytes have not arrived yet (0..3). Bytes that can never
// become valid (a stray continuation byte, 0xF8..0xFF) are not held back.
std::size_t incomplete_tail(std::string_view s);

// True when `s` is well-formed UTF-8 (what a strict JSON parser requires).
bool valid(std::string_view s);

// Some servers put raw partial UTF-8 bytes of a character into a JSON string, which makes
// the document invalid UTF-8. To still parse it, every byte that is not part of a
// well-formed character is rewritten as the private-use code point U+10FF00+byte (4
// bytes, F4 8F BE|BF xx); restore_bytes() maps those back to the raw byte. Appends to out.
void escape_invalid(std::string_view in, std::string& out);
// Replaces each escaped code point made by escape_invalid() with its raw byte. Appends.
void restore_bytes(std::string_view in, std::string& out);

}  // namespace inferscope::utf8
