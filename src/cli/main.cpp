// ddpbench: PyTorch DDP training benchmark driving c10d's Reducer from C++.
// A build without libtorch (DDPBENCH_WITH_TORCH=OFF, e.g. for a login node) has only
// the analysis subcommands: report, diff, check, predict.
#ifdef DDPBENCH_HAVE_ENGINE
#include <c10/util/Exception.h>

#include "engine/run/launch.hpp"
#include "engine/run/teardown.hpp"
#endif
#include <fmt/format.h>

#include <cstdio>

#include "cli/commands.hpp"
#include "core/launch/launch_env.hpp"
#include "core/launch/process.hpp"
#include "core/util/errors.hpp"
#include "core/util/sanitize.hpp"
#include "core/util/version.hpp"

namespace {

// Runs before any shared library's initialiser: libgomp reads OMP_NUM_THREADS when it loads
// and prints its own line about a value it refuses; taken out here, that value gets
// ddpbench's one line instead (threads_per_rank).
void before_shared_libraries(int, char**, char** envp) { ddpbench::hide_omp_num_threads_from_openmp(envp); }
__attribute__((section(".preinit_array"), used)) void (*const kBeforeSharedLibraries)(int, char**,
                                                                                    char**) = before_shared_libraries;

// Parses the command line and runs the subcommand; returns main's exit code, with the
// one error line printed, and sets `command` to the subcommand that ran ("ddpbench" before one).
int run_command(int argc, char** argv, std::string& command) {
  using namespace ddpbench;
  std::vector<std::string> args(argv, argv + argc);
  CLI::App app{"ddpbench: PyTorch DistributedDataParallel benchmark (libtorch c10d, no Python)", "ddpbench"};
  app.set_version_flag("--version",
                       fmt::format("ddpbench {} (git {}{})", tool_version(), git_sha(), git_dirty() ? ", dirty" : ""));
  app.require_subcommand(1);
  app.formatter(std::make_shared<cli::HelpFormatter>());
  std::vector<cli::Command> commands;
#ifdef DDPBENCH_HAVE_ENGINE
  commands.push_back(cli::add_run_command(app, args));
  commands.push_back(cli::add_comm_command(app, args));
  commands.push_back(cli::add_find_max_bs_command(app, args));
  commands.push_back(cli::add_dataparallel_command(app, args));
  commands.push_back(cli::add_models_command(app));
  commands.push_back(cli::add_validate_command(app));
#endif
  commands.push_back(cli::add_report_command(app));
  commands.push_back(cli::add_diff_command(app));
  commands.push_back(cli::add_check_command(app));
  commands.push_back(cli::add_predict_command(app));
  commands.push_back(cli::add_env_command(app));

  // CLI11 reads an unknown first word as a stray argument ("A subcommand is required").
  std::string names;
  bool known = false;
  for (const auto& c : commands) {
    names += (names.empty() ? "" : ", ") + c.app->get_name();
    known = known || (argc > 1 && c.app->get_name() == argv[1]);
  }
  if (argc > 1 && argv[1][0] != '-' && !known) {
    std::fprintf(stderr, "ddpbench: error: '%s' is not a ddpbench command; use one of: %s (see 'ddpbench --help')\n",
                 terminal_line(argv[1]).c_str(), names.c_str());
    return kExitUsage;
  }
  if (known) command = argv[1];
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::string sub;
    for (const auto* s : app.get_subcommands()) sub = " " + s->get_name();
    std::string line = fmt::format("{}; see 'ddpbench{} --help'", first_line(e.what()), sub);
#ifdef DDPBENCH_HAVE_ENGINE
    // A rank of a job that refuses its command line names itself, and rank 0 is told.
    if (sub == " run" || sub == " comm") try {
        refuse_on_this_rank(detect_launch(current_env()), line);
      } catch (const UsageError& u) {
        line = u.what();
      } catch (const std::exception&) {  // a launcher environment that is itself refused: said later
      }
#endif
    std::fprintf(stderr, "ddpbench: error: %s\n", terminal_line(line).c_str());
    return kExitUsage;
  }

  // The error line, then what the failed command left behind (error_notes), in one
  // write so that no other rank's line lands between them.
  // One line of terminal text each (core/util/sanitize): a name from a file cannot forge a line.
  const auto fail = [](const std::string& line, int code) {
    std::string text = terminal_line(line) + "\n";
    for (const auto& n : error_notes()) text += "ddpbench: note: " + terminal_line(n) + "\n";
    std::fwrite(text.data(), 1, text.size(), stderr);
    return code;
  };
  try {
    for (auto& c : commands)
      if (c.app->parsed()) {
        command = c.app->get_name();
        return c.run();
      }
    return kExitUsage;
  } catch (const SilentExit& e) {
    return e.code;
  } catch (const UsageError& e) {
    return fail("ddpbench: error: " + first_line(e.what()), kExitUsage);
  } catch (const SelfCheckError& e) {
    return fail("ddpbench: self-check failed: " + first_line(e.what()), kExitSelfCheck);
#ifdef DDPBENCH_HAVE_ENGINE
  } catch (const c10::Error& e) {
    return fail("ddpbench: error: " + first_line(e.what_without_backtrace()), kExitFailure);
#endif
  } catch (const std::exception& e) {
    return fail("ddpbench: error: " + first_line(e.what()), kExitFailure);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string command = "ddpbench";
  // A step of validate ends with it (core/launch/process.hpp, ProcessOptions::die_with_parent).
  if (!ddpbench::die_with_parent_from_env()) {
    std::fputs("ddpbench: error: the validate that started this step is gone; the step does not run\n", stderr);
    return ddpbench::kExitFailure;
  }
  const int code = run_command(argc, argv, command);
#ifdef DDPBENCH_HAVE_ENGINE
  // The one teardown, on every path, before main returns (engine/run/teardown.hpp): nothing
  // torch owns is left to static destructors or to threads that outlive main.
  ddpbench::teardown_process(command, code);
#endif
  return code;
}
