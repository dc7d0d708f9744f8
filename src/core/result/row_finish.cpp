#include "core/result/row_finish.hpp"

#include <fmt/format.h>

#include "core/result/per_rank_detail.hpp"
#include "core/result/row_metrics.hpp"

namespace ddpbench {

void finish_row(BenchResult& row, const std::vector<BenchResult>& rows, const RowFinish& how) {
  if (row.launch.is_object()) return;  // kept from the run --resume continues: as it was written
  reduce_rank_metrics(row);
  keep_per_rank_detail(row, how.keep_all_ranks);
  // DDP faster than the same step without it: noise, or not the same work.
  if (row.ddp)
    for (const auto& nd : rows)
      if (!nd.ddp && nd.model == row.model && nd.batch_per_rank == row.batch_per_rank &&
          nd.grad_accum == row.grad_accum && row.summary.p50_s < nd.summary.p50_s) {
        row.warnings.push_back(
            {"negative_ddp_overhead", fmt::format("DDP p50 {:.4f} s is below the no-DDP p50 {:.4f} s: DDP cannot be "
                                                  "free, so noise or a changed machine state dominates this row",
                                                  row.summary.p50_s, nd.summary.p50_s)});
        break;
      }
  if (how.launch.is_object()) row.launch = how.launch;
}

}  // namespace ddpbench
