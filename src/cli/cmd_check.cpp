// `ddpbench check FILE --reference REF`: acceptance test against reference values.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "cli/commands.hpp"
#include "core/analysis/check.hpp"
#include "core/result/config_key.hpp"
#include "core/util/errors.hpp"

namespace ddpbench::cli {

Command add_check_command(CLI::App& parent) {
  struct Flags {
    std::string file, reference;
  };
  auto f = std::make_shared<Flags>();
  auto* app = parent.add_subcommand("check",
                                    "Check a result against reference values with tolerances; exit 1 on "
                                    "any FAIL or MISSING");
  app->add_option("file", f->file, "Result file written by ddpbench run --json")->required();
  app->add_option("--reference", f->reference, "Reference file (see docs/reference/example.json)")->required();
  app->footer(
      "Exit codes: 0 every applicable entry passed; 1 an entry FAILed, WARNed (in range on a row whose warnings "
      "void it) or is MISSING, or no entry applies to "
      "the result's device (nothing checked is not a pass); 2 bad input (an unreadable file, a malformed "
      "reference, an unknown key, a comm or find-max-bs result).\nEntries pin model, batch_per_rank, image_size, world_size and setup: "
      "docs/METHODOLOGY.md, \"check references\".");
  return {app, [f]() -> int {
            const ResultFile result = load_result(f->file);
            if (result.kind != "run")  // its rows are elsewhere: every entry would be MISSING
              throw UsageError(fmt::format("'{}' is a {} result; check reads run results (ddpbench run --json)",
                                           f->file, result.kind));
            const auto refs = parse_reference(read_text_file(f->reference), f->reference);
            int skipped = 0;
            const auto rows = check_against(result, refs, skipped);
            const std::string text = render_check_text(rows, device_type(result), skipped);
            write_stdout(text);
            if (rows.empty()) return kExitFailure;  // nothing checked is not a pass
            for (const auto& r : rows)
              if (r.status != "PASS") return kExitFailure;
            return kExitOk;
          }};
}

}  // namespace ddpbench::cli
