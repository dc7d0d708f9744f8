#include "core/render/report_page.hpp"

#include <stdlib.h>

#include <cstdio>
#include <vector>

#include "core/render/html.hpp"
#include "core/render/plots.hpp"
#include "core/render/report_convergence.hpp"
#include "core/result/result.hpp"
#include "core/util/errors.hpp"
#include "core/util/remove_tree.hpp"

namespace ddpbench {

std::string report_page(const Report& rep) {
  // Plots only for the page: into a temporary directory, removed on every path.
  struct TempDir {
    std::string path;
    ~TempDir() { remove_tree(path); }
  } tmp;
  std::vector<Plot> plots;
  char tmpl[] = "/tmp/ddpbench-plots-XXXXXX";
  if (::mkdtemp(tmpl)) tmp.path = tmpl;
  try {
    plots = write_plots(rep, tmp.path);
    for (auto& p : write_convergence_plots(rep.convergence, tmp.path)) plots.push_back(std::move(p));
    for (const auto& p : plots)
      if (!p.error.empty())
        std::fprintf(stderr, "ddpbench: warning: plot %s not drawn: %s\n", p.name.c_str(), p.error.c_str());
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ddpbench: warning: HTML without plots: %s\n", e.what());
  }
  return render_html(rep, plots, utc_now_iso8601());
}

}  // namespace ddpbench
