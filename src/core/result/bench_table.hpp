// Terminal table in the layout of PyTorch's benchmarks/distributed/ddp/benchmark.py,
// so existing log parsers keep working. Torch-free.
#pragma once

#include <string>
#include <vector>

#include "core/result/result.hpp"

namespace ddpbench {

/// Row label of a group: "<nodes>M/<ranks><unit>", e.g. "2M/16G" (2 machines, 16 GPUs).
/// benchmark.py hard-codes 8 GPUs per machine; ddpbench counts the distinct hosts of the group.
std::string group_label(int nodes, int ranks, char unit);

/// Column header line: 22 blanks, then "sec/iter" (14 wide) and "ex/sec" (10 wide)
/// once per percentile (p50, p75, p90, p95), as benchmark.py's print_header.
std::string table_header();

/// One row, as benchmark.py's print_measurements:
/// "%4d <units> -- %8s:" then "  pNN:  %1.3fs  %6d/s" for p50/p75/p90/p95,
/// e.g. "   2 GPUs --    1M/2G:  p50:  0.097s    329/s  p75: ...".
/// ex/s is the batch of one rank divided by the percentile time (per-GPU ex/s).
/// `units` is "GPUs" or "CPUs". Percentiles come from `row.summary`.
std::string table_row(const BenchResult& row, const std::string& units);

/// What ddpbench adds after benchmark.py's columns of a row (so parsers of benchmark.py's
/// log still match the row's start): measured iterations, the 95% CI half-width of the
/// mean as % of the mean, the self-check ("check ok" / "check FAILED"; DDP rows), then each
/// metric of core/result/row_metrics with a run_label that the row has (peak memory of its ranks),
/// e.g. "  n 50  ci ±0.8%  check ok  peak 3.19 GiB"; with --iters auto a series that
/// stopped at a limit before reaching its CI target says so.
std::string table_row_extras(const BenchResult& row);

/// The DDP settings of a row that differ from Python DDP's defaults, in the report's words
/// (ConfigKey::knob_label): "bucket cap 5 MiB, comm hook fp16, static graph, grad accum 4";
/// "" when all are defaults.
/// (Shown in [brackets] by table_row_extras, since rows of one group share their label.)
std::string row_settings(const BenchResult& row);

/// `run --breakdown`'s line under a row: its step breakdown (mean over ranks, ms per step),
/// "      ms/step: forward 12.1 | backward compute 30.2 | comm 9.0 (hidden 7.5, exposed 1.5) |
/// optimizer 2.0 | other 0.4 | step 46.2" (no comm part on no-DDP rows); "" without a breakdown.
std::string table_row_breakdown(const BenchResult& row);

/// One line per warning of the row, indented under it: "      ! <code>: <message>".
std::vector<std::string> table_row_warnings(const BenchResult& row);

/// An integer with a comma every three digits: 11689512 -> "11,689,512".
std::string with_thousands(long long v);

}  // namespace ddpbench
