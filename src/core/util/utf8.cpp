#include "core/util/utf8.hpp"

namespace ddpbench {
namespace {

// The length of the well-formed character at text[i], or 0 (RFC 3629's table).
std::size_t char_length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const std::size_t n = s.size() - i;
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  const auto cont = [&](std::size_t k) { return (b(k) & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return n >= 2 && cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (n < 3) return 0;
    const unsigned char c1 = b(i + 1);
    const bool ok1 = c == 0xE0 ? (c1 >= 0xA0 && c1 <= 0xBF) : c == 0xED ? (c1 >= 0x80 && c1 <= 0x9F) : cont(i + 1);
    return ok1 && cont(i + 2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (n < 4) return 0;
    const unsigned char c1 = b(i + 1);
    const bool ok1 = c == 0xF0 ? (c1 >= 0x90 && c1 <= 0xBF) : c == 0xF4 ? (c1 >= 0x80 && c1 <= 0x8F) : cont(i + 1);
    return ok1 && cont(i + 2) && cont(i + 3) ? 4 : 0;
  }
  return 0;
}

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

bool is_valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = char_length(text, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string sanitize_utf8(std::string_view text, std::size_t max_bytes) {
  std::string out;
  out.reserve(text.size() < max_bytes ? text.size() : max_bytes);
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = char_length(text, i);
    const std::string_view piece = len ? text.substr(i, len) : kReplacement;
    if (out.size() + piece.size() > max_bytes) break;
    out.append(piece);
    i += len ? len : 1;
  }
  return out;
}

}  // namespace ddpbench
