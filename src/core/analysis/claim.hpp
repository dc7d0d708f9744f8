// A verdict as data. Every sentence that judges what the result files show (the report's
// headline, its target verdicts and recommendations, diff's faster/slower, validate's verdict)
// is one Claim: what kind of claim it is, what it is about, the numbers and the rows of which
// files it rests on, the rule of docs/METHODOLOGY.md it applies, and the sentence rendered from
// those fields by its kind's renderer (claim_kinds). The JSON outputs carry the claims, and a
// checker written apart from this code (tests/tools/check_claims.py) re-derives each kind from
// the result files (docs/METHODOLOGY.md "Claims and their checker"). Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ddpbench {

/// A result row a claim rests on.
struct ClaimRow {
  std::string file;   ///< the file as it was given on the command line
  std::string label;  ///< its label in the output ("F2"; diff: "base" or "test")
  int row = -1;       ///< 0-based index in the file's `results` (BenchResult::index_in_file); -1: the file
  std::string role;   ///< what the row is to the claim: "measured", "baseline", "launch", "compared", ...
};

/// A named number of a claim, in the unit it names.
struct ClaimNumber {
  std::string name;  ///< "efficiency", "threshold", "aggregate_ex_s", "spread"
  double value = 0;
  std::string unit;  ///< "fraction", "ex/s", "s", "bytes", "USD", "count", "GB/s"
};

/// One member of a claim that compares several things (the setups of one world size, the
/// techniques of a memory table, the rows a data-quality count covers).
struct ClaimItem {
  std::string name;     ///< what it is: "ddp, fp16" (a setup), "F2 at 1 GPU" (a row)
  std::string verdict;  ///< against the claim's subject: "fastest", "within noise", "beyond noise", ...
  std::vector<ClaimNumber> numbers;
  std::vector<ClaimRow> rows;
  std::vector<std::string> warnings;  ///< warning codes of its rows (recomputed for every schema)
  std::optional<double> number(const std::string& name) const;
};

/// One claim (see the file comment).
struct Claim {
  std::string kind;     ///< an entry of claim_kinds(): "target", "setup", "diff_row", ...
  std::string subject;  ///< what it is about: "resnet50, fp16, batch 256 per GPU, 224 px, NVIDIA H100 80GB HBM3"
  std::string verdict;  ///< the kind's verdict word: "PASS", "FAIL", "VOID", "faster", "within noise", ...
  std::vector<ClaimNumber> numbers;
  std::vector<std::pair<std::string, std::string>> words;  ///< named texts the sentence uses, in order
  std::vector<ClaimRow> rows;
  std::vector<ClaimItem> items;
  std::vector<std::string> warnings;  ///< codes of the warnings of the rows it rests on
  std::string rule;                   ///< the rule it applies: a section of docs/METHODOLOGY.md (from its kind)
  std::string text;                   ///< the sentence, rendered from the fields above (render_claim)

  /// Adds a number (chainable).
  Claim& num(const std::string& name, double value, const std::string& unit);
  /// Adds a named text (chainable).
  Claim& word(const std::string& name, const std::string& text);
  /// The number `name`; throws std::logic_error when the claim has none (a renderer's bug).
  double number(const std::string& name) const;
  std::optional<double> number_opt(const std::string& name) const;
  /// The text `name`; "" when the claim has none.
  std::string text_of(const std::string& name) const;
  bool has_word(const std::string& name) const;
};

/// One kind of claim: its name, the METHODOLOGY rule it applies and its renderer.
struct ClaimKind {
  const char* kind;
  const char* rule;  ///< "docs/METHODOLOGY.md <section>[: <rule>]"
  std::string (*render)(const Claim&);
};

/// Every claim kind, one entry each (core/analysis/claim.cpp): the sentence of a claim is
/// written in one place, its kind's renderer.
const std::vector<ClaimKind>& claim_kinds();

/// Sets c.rule and c.text from c's kind (claim_kinds) and returns c. Throws std::logic_error
/// for a kind the catalogue lacks.
Claim finish_claim(Claim c);

/// The claim as JSON: {kind, subject, verdict, text, rule, numbers{name: {value, unit}},
/// words{name: text}, rows[{file, label, row, role}], items[...], warnings[]}.
nlohmann::json claim_json(const Claim& c);

/// The claims as a JSON array.
nlohmann::json claims_json(const std::vector<Claim>& cs);

/// "1 GPU", "4 ranks": a count and its unit, plural when not one.
std::string count_words(long long n, const std::string& unit);

/// A fraction as a signed percentage with one decimal, "+2.9%", "-1.0%"; a value that rounds to
/// zero is "+0.0%" (never "-0.0%").
std::string signed_percent(double fraction);

/// "a, b and c".
std::string and_list(const std::vector<std::string>& items);

/// Launches of one configuration a launch-to-launch spread needs before a claim may rest on it:
/// the report takes the median of them (docs/METHODOLOGY.md "Several launches of one configuration").
inline constexpr int kLaunchesForNoise = 3;

}  // namespace ddpbench
