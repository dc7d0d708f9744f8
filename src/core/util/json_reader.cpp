#include "core/util/json_reader.hpp"

#include <fmt/format.h>

#include <vector>

#include "core/util/errors.hpp"

namespace ddpbench {

namespace {

// Heap bytes of a std::string of `n` characters beyond its own 32 (glibc: 8 bytes of header,
// 16-byte chunks, at least 32); 0 within the small-string buffer.
long long string_heap_bytes(size_t n) {
  if (n <= 15) return 0;
  const long long need = static_cast<long long>(n) + 1 + 8;
  return std::max<long long>(32, (need + 15) / 16 * 16);
}

// The counting handler of json_shape (nlohmann's SAX interface).
class ShapeCounter {
 public:
  using json = nlohmann::json;
  JsonShape shape;
  long long stop_above = -1;
  bool failed = false;
  std::string error;  // "byte N" for a syntax error, else the library's first line

  bool null() { return value(0); }
  bool boolean(bool) { return value(0); }
  bool number_integer(json::number_integer_t) { return value(0); }
  bool number_unsigned(json::number_unsigned_t) { return value(0); }
  bool number_float(json::number_float_t, const json::string_t&) { return value(0); }
  bool string(json::string_t& s) { return value(48 + string_heap_bytes(s.size())); }
  bool binary(json::binary_t& b) { return value(48 + static_cast<long long>(b.size())); }
  bool start_object(std::size_t) { return open(true); }
  bool key(json::string_t& k) {
    shape.dom_bytes += string_heap_bytes(k.size());
    return !over();
  }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(false); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) {
    failed = true;
    error = ex.id >= 100 && ex.id < 200 ? fmt::format("byte {}", position) : first_line(ex.what());
    return false;
  }

 private:
  std::vector<bool> in_object_;  // one per open container: an object (true) or an array

  // The slot of a value in its parent: a member's tree node (key, slot, links) or an array
  // element with the vector's growth slack; the top-level value sits in a json of its own.
  long long slot() const {
    if (in_object_.empty()) return 16;
    return in_object_.back() ? 96 : 32;
  }
  bool value(long long heap) {
    ++shape.values;
    shape.dom_bytes += slot() + heap;
    return !over();
  }
  // Past the bound: stop the pass (a false return ends nlohmann's sax_parse).
  bool over() {
    if (stop_above < 0 || shape.dom_bytes <= stop_above) return false;
    shape.stopped = true;
    return true;
  }
  bool open(bool object) {
    const bool go_on = value(object ? 64 : 32);  // the std::map or std::vector the value points to
    in_object_.push_back(object);
    shape.max_depth = std::max(shape.max_depth, static_cast<int>(std::min<size_t>(in_object_.size(), 1u << 30)));
    return go_on;
  }
  bool close() {
    if (!in_object_.empty()) in_object_.pop_back();
    return true;
  }
};

std::string mib(long long bytes) {
  return bytes >= (1 << 20) ? fmt::format("{:.0f} MiB", static_cast<double>(bytes) / (1 << 20))
                            : fmt::format("{} bytes", bytes);
}

}  // namespace

JsonShape json_shape(const std::string& text, const std::string& source, const std::string& fix, long long stop_above) {
  ShapeCounter counter;
  counter.stop_above = stop_above;
  const bool ok = nlohmann::json::sax_parse(text, &counter, nlohmann::json::input_format_t::json, /*strict=*/true);
  if (counter.shape.stopped) return counter.shape;
  if (!ok || counter.failed)
    throw UsageError(fmt::format("{}: not valid JSON ({}); {}", source,
                                 counter.error.empty() ? std::string("cut short") : counter.error, fix));
  return counter.shape;
}

nlohmann::json parse_json_bounded(const std::string& text, const std::string& source, const std::string& fix,
                                  int max_depth, long long max_dom_bytes) {
  const JsonShape s = json_shape(text, source, fix, max_dom_bytes);
  if (s.stopped)
    throw UsageError(
        fmt::format("{}: its first {} JSON values would already take more than the {} of memory one input may take; {}",
                    source, s.values, mib(max_dom_bytes), fix));
  if (s.max_depth > max_depth)
    throw UsageError(fmt::format("{}: nested {} deep, more than the {} levels a ddpbench input may have; {}", source,
                                 s.max_depth, max_depth, fix));
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {  // json_shape accepted it: not expected
    throw UsageError(fmt::format("{}: not valid JSON (byte {}); {}", source, e.byte, fix));
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{}: not valid JSON ({}); {}", source, first_line(e.what()), fix));
  }
}

}  // namespace ddpbench
