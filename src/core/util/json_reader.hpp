// The one parser of JSON input files (result, reference, targets and baselines files): a
// counting SAX pass first, then the DOM only when the text is shallow and small enough.
// nlohmann's DOM is copied recursively (a file nested 100,000 deep overflowed the stack
// when a section was copied) and takes up to ~32 bytes of memory per byte of text (an array
// of empty objects), so neither depth nor size is left to the text. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace ddpbench {

/// Deepest nesting of arrays and objects an input file may have. A result file is under 20
/// deep; the limit keeps every recursive walk of the DOM (copies, comparisons, dumps) far
/// from the stack's end.
inline constexpr int kMaxJsonDepth = 512;

/// The most memory the DOM of one input file may take, as estimated by json_shape: 512 MiB,
/// twice the 256 MiB cap on an input file (kMaxInputFileBytes), so that a file of the size
/// the cap allows and of the shape ddpbench writes (mostly numbers in arrays, about 1.6 bytes
/// of DOM per byte of text) is read, and one of the worst shape (millions of small objects,
/// up to 32 bytes of DOM per byte) is refused before its DOM is built.
inline constexpr long long kMaxJsonDomBytes = 512LL << 20;

/// What the counting pass found in a JSON text.
struct JsonShape {
  long long values = 0;     ///< values of any type, containers included
  long long dom_bytes = 0;  ///< estimated bytes of its nlohmann::json DOM (glibc malloc on 64-bit)
  int max_depth = 0;        ///< deepest nesting of arrays and objects (0: a lone scalar)
  /// The pass stopped early, once dom_bytes passed `stop_above` (the counts cover the text
  /// read so far; the rest was not checked).
  bool stopped = false;
};

/// Counts the values, depth and estimated DOM bytes of `text` without building a DOM (a
/// SAX pass: no recursion, memory of the order of the depth). Bytes per value, measured for
/// nlohmann::json 3.11 with glibc: 32 for an element of an array (its slot, with the
/// vector's growth slack), 96 for a member of an object (the tree node, key and slot), plus
/// 64 for an object, 32 for an array and 48 for a string, plus the heap of a key or string
/// longer than 15 bytes. With `stop_above` >= 0 the pass stops as soon as dom_bytes exceeds
/// it (JsonShape::stopped), so a text far beyond the bound costs only the part that passes
/// it. Throws UsageError "SOURCE: not valid JSON (...); FIX" on a syntax error or a number
/// beyond a double (in the part read), `source` and `fix` as parse_json_bounded.
JsonShape json_shape(const std::string& text, const std::string& source, const std::string& fix,
                     long long stop_above = -1);

/// Parses `text`, the content of the input file `source`, into a DOM: json_shape first, then
/// nlohmann::json::parse. Throws UsageError, one line naming `source`, the problem and then
/// `fix` (e.g. "pass a file written by ddpbench run --json"): on invalid JSON ("not valid
/// JSON (byte N)"), on nesting deeper than `max_depth` ("nested D deep, more than the 512
/// levels ..."), on a DOM estimated beyond `max_dom_bytes` ("its first N values would take
/// more than the 512 MiB of memory ...", found without reading further).
nlohmann::json parse_json_bounded(const std::string& text, const std::string& source, const std::string& fix,
                                  int max_depth = kMaxJsonDepth, long long max_dom_bytes = kMaxJsonDomBytes);

}  // namespace ddpbench
