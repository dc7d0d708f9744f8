// The arithmetic of `ddpbench comm`, as nccl-tests defines it (github.com/NVIDIA/nccl-tests,
// doc/PERFORMANCE.md and src/<collective>.cu): which collectives, the sizes of a sweep, the
// "size" and "count" columns, algorithm and bus bandwidth, the result table and the
// --min-busbw verdict. Torch-free.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/result/result.hpp"
#include "core/util/table.hpp"

namespace ddpbench {

/// The collectives `ddpbench comm` measures.
enum class Collective { kAllreduce, kReduceScatter, kAllGather, kBroadcast, kReduce, kAllToAll, kBarrier };

/// Every collective, in the order `comm` measures them.
const std::vector<Collective>& all_collectives();

/// "allreduce", "reduce_scatter", "all_gather", "broadcast", "reduce", "all_to_all", "barrier".
const char* collective_name(Collective c);

/// Parses a comma list of collective names (all_collectives' names; "alltoall", "allgather"
/// and "reducescatter" are read as well), in the order all_collectives() lists them,
/// duplicates dropped. Throws UsageError naming `flag` for an unknown or empty list.
std::vector<Collective> parse_collectives(const std::string& list, const std::string& flag = "--collectives");

/// True for the collectives that take a reduction operator (allreduce, reduce_scatter, reduce).
bool reduces(Collective c);

/// True for the collectives with a root rank (broadcast, reduce).
bool has_root(Collective c);

/// nccl-tests' bus bandwidth factor for `n` ranks (doc/PERFORMANCE.md): busbw = algbw * factor.
///   allreduce                          2(n-1)/n
///   reduce_scatter, all_gather, all_to_all  (n-1)/n
///   broadcast, reduce                  1
///   barrier                            0 (no data: time only)
/// Throws std::invalid_argument for n < 1.
double busbw_factor(Collective c, int n);

/// One measured size, as nccl-tests' setupArgs and <coll>GetCollByteCount derive it from a
/// requested size in bytes: `count` = requested / element size; for all_gather,
/// reduce_scatter and all_to_all each rank's chunk is count / n elements (rounded down) and
/// the buffer is n chunks.
struct CommSize {
  long long bytes = 0;            ///< nccl-tests' "size" column: max(send, receive) buffer bytes of one rank
  long long count = 0;            ///< nccl-tests' "count" column: elements of the collective's count argument
                                  ///< (per-rank chunk for all_gather, reduce_scatter, all_to_all)
  long long buffer_elements = 0;  ///< elements of the larger (send or receive) buffer of one rank
};

/// The CommSize of `requested_bytes` of elements of `elem_size` bytes on `n` ranks. Barrier: all
/// zero. Throws std::invalid_argument for elem_size < 1, n < 1 or requested_bytes < 0.
CommSize comm_size(Collective c, long long requested_bytes, int elem_size, int n);

/// The rows one collective gets on `n` ranks from the requested `sizes`: comm_size of each,
/// skipping sizes that leave no element (per rank, for the chunked collectives) and sizes
/// that rounding made equal to an earlier one. Barrier: one row of size 0.
std::vector<CommSize> comm_sizes(Collective c, const std::vector<long long>& sizes, int elem_size, int n);

/// Bytes of the buffers one rank holds to measure `size` (CommSize::bytes = S) on `n` ranks:
/// allreduce, broadcast, reduce S; all_gather S + S/n (input chunk and gathered output);
/// all_to_all 2S (input and output); reduce_scatter 2S + S/n (input, the all_to_all buffer
/// of the Gloo emulation, output chunk); barrier 0. For the memory check before ranks start.
long long buffer_bytes_per_rank(Collective c, long long size_bytes, int n);

/// Algorithm bandwidth in GB/s (1e9 bytes/s): bytes / time_s / 1e9, as nccl-tests' algbw =
/// S / t with S the "size" column (for all_gather etc. the whole gathered buffer). 0 when
/// time_s <= 0 or bytes == 0.
double algbw_gbps(long long bytes, double time_s);

/// The sizes of a sweep, as nccl-tests' loop: from `min_bytes` while <= `max_bytes`,
/// multiplying by the whole number `step_factor` when it is > 1, else adding `step_bytes`.
/// Throws UsageError (naming -b/-e/-f/-i) when min_bytes < 0, max_bytes < min_bytes,
/// step_factor < 1, step_factor == 1 with step_bytes < 1, or the sweep has more than 4096 sizes.
std::vector<long long> size_sweep(long long min_bytes, long long max_bytes, long long step_factor,
                                  long long step_bytes);

/// Bytes of one element of a `--datatype` name ("float32" 4, "float16" 2, "bfloat16" 2,
/// "float64" 8, "int32" 4, "int64" 8, "int8" 1, "uint8" 1). Throws UsageError naming the
/// accepted names otherwise.
int dtype_size(const std::string& dtype);

/// Checks a `--op` name: "sum", "prod", "max" or "min"; throws UsageError otherwise.
void check_redop(const std::string& op);

/// The nccl-tests table of one collective on one group: columns size (B), count (elements),
/// type, redop, root, time (us), algbw (GB/s), busbw (GB/s), #wrong (text; "n/a" where
/// CommResult::wrong < 0: not checked), CPU cores (CommResult::cpu_cores; "n/a" without), plus
/// time_max_us (slowest rank; CSV/JSON only). `title` names the collective and group.
Table comm_table(const std::string& title, const std::vector<CommResult>& rows);

/// The --min-busbw rule. "Large" sizes: the allreduce rows of a group whose bytes are at least
/// a quarter of the largest allreduce size measured on that group. For every group of >= 2
/// ranks the mean busbw of its large rows must reach `min_gbps`.
struct BusbwVerdict {
  bool pass = true;
  std::string line;  ///< one line: PASS/FAIL, the measured mean, the rows it covers, the limit
};

/// The verdict over `rows` (any collectives; only allreduce rows count). Throws UsageError
/// when no allreduce row of a group of >= 2 ranks is there to judge.
BusbwVerdict min_busbw_verdict(const std::vector<CommResult>& rows, double min_gbps);

}  // namespace ddpbench
