// `ddpbench diff BASE TEST`: what changed between two result files, and whether it matters.
#include <cstdio>
#include <memory>

#include "cli/commands.hpp"
#include "core/diff.hpp"
#include "core/errors.hpp"

namespace ddpbench::cli {

Command add_diff_command(CLI::App& parent) {
  struct Flags {
    std::string base, test, format = "table";
  };
  auto f = std::make_shared<Flags>();
  auto* app = parent.add_subcommand("diff", "Compare two result files: configuration, then per-row timing changes "
                                            "with a noise verdict");
  app->add_option("base", f->base, "Result file A (the baseline)")->required();
  app->add_option("test", f->test, "Result file B (the candidate)")->required();
  app->add_option("--format", f->format, "Output: table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  return {app, [f]() -> int {
            const DiffReport d = diff_results(read_result_file(f->base), read_result_file(f->test));
            const std::string text = f->format == "json" ? diff_json(d).dump(2) + "\n" : render_diff_text(d);
            std::fwrite(text.data(), 1, text.size(), stdout);
            return kExitOk;
          }};
}

}  // namespace ddpbench::cli
