// Text that enters from outside (environment variables, host names, other programs'
// output) made valid UTF-8 once, where it enters, so that everything downstream (JSON
// dumps, tables, the store) can take it as it is. Torch-free.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ddpbench {

/// True when `text` is well-formed UTF-8 (no overlong forms, no surrogates, nothing above
/// U+10FFFF).
bool is_valid_utf8(std::string_view text);

/// `text` as valid UTF-8 of at most `max_bytes` bytes: each byte that does not start a
/// well-formed character (and each cut-off sequence) becomes U+FFFD, and the result is cut
/// on a character boundary, never inside one. Never throws (but std::bad_alloc).
std::string sanitize_utf8(std::string_view text, std::size_t max_bytes = std::string::npos);

}  // namespace ddpbench
