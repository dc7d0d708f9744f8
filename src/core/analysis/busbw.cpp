#include "core/analysis/busbw.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "core/config/run_config.hpp"
#include "core/util/errors.hpp"

namespace ddpbench {

const std::vector<Collective>& all_collectives() {
  static const std::vector<Collective> all{Collective::kAllreduce, Collective::kReduceScatter, Collective::kAllGather,
                                           Collective::kBroadcast, Collective::kReduce,        Collective::kAllToAll,
                                           Collective::kBarrier};
  return all;
}

const char* collective_name(Collective c) {
  switch (c) {
    case Collective::kAllreduce: return "allreduce";
    case Collective::kReduceScatter: return "reduce_scatter";
    case Collective::kAllGather: return "all_gather";
    case Collective::kBroadcast: return "broadcast";
    case Collective::kReduce: return "reduce";
    case Collective::kAllToAll: return "all_to_all";
    case Collective::kBarrier: return "barrier";
  }
  return "?";
}

std::vector<Collective> parse_collectives(const std::string& list, const std::string& flag) {
  static const std::map<std::string, Collective> aliases{{"alltoall", Collective::kAllToAll},
                                                         {"allgather", Collective::kAllGather},
                                                         {"reducescatter", Collective::kReduceScatter},
                                                         {"all_reduce", Collective::kAllreduce}};
  std::vector<bool> want(all_collectives().size(), false);
  const auto items = split_list(list);
  std::string names;
  for (Collective c : all_collectives()) names += (names.empty() ? "" : ",") + std::string(collective_name(c));
  if (items.empty()) throw UsageError(fmt::format("{} is empty; name one or more of {}", flag, names));
  for (const auto& item : items) {
    bool found = false;
    for (size_t k = 0; k < all_collectives().size(); ++k)
      if (item == collective_name(all_collectives()[k])) want[k] = found = true;
    if (auto it = aliases.find(item); !found && it != aliases.end())
      for (size_t k = 0; k < all_collectives().size(); ++k)
        if (all_collectives()[k] == it->second) want[k] = found = true;
    if (!found) throw UsageError(fmt::format("{} '{}' is not a collective; use a comma list of {}", flag, item, names));
  }
  std::vector<Collective> out;
  for (size_t k = 0; k < want.size(); ++k)
    if (want[k]) out.push_back(all_collectives()[k]);
  return out;
}

bool reduces(Collective c) {
  return c == Collective::kAllreduce || c == Collective::kReduceScatter || c == Collective::kReduce;
}

bool has_root(Collective c) { return c == Collective::kBroadcast || c == Collective::kReduce; }

double busbw_factor(Collective c, int n) {
  if (n < 1) throw std::invalid_argument("busbw_factor: n must be >= 1");
  const double nd = n;
  switch (c) {
    case Collective::kAllreduce: return 2.0 * (nd - 1) / nd;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kAllToAll: return (nd - 1) / nd;
    case Collective::kBroadcast:
    case Collective::kReduce: return 1.0;
    case Collective::kBarrier: return 0.0;
  }
  return 0.0;
}

CommSize comm_size(Collective c, long long requested_bytes, int elem_size, int n) {
  if (elem_size < 1 || n < 1 || requested_bytes < 0) throw std::invalid_argument("comm_size: bad arguments");
  CommSize s;
  if (c == Collective::kBarrier) return s;
  const long long count = requested_bytes / elem_size;
  switch (c) {
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll: {
      // nccl-tests: sendcount/recvcount = (count/n)*n on the gathered/scattered side,
      // paramcount = count/n; the printed size is max(send, recv) bytes.
      const long long chunk = count / n;
      s.count = chunk;
      s.buffer_elements = chunk * n;
      break;
    }
    default: s.count = count; s.buffer_elements = count;
  }
  s.bytes = s.buffer_elements * elem_size;
  return s;
}

std::vector<CommSize> comm_sizes(Collective c, const std::vector<long long>& sizes, int elem_size, int n) {
  if (c == Collective::kBarrier) return {CommSize{}};
  std::vector<CommSize> out;
  for (long long requested : sizes) {
    const CommSize s = comm_size(c, requested, elem_size, n);
    if (s.count == 0) continue;
    if (std::any_of(out.begin(), out.end(), [&](const CommSize& o) { return o.bytes == s.bytes; })) continue;
    out.push_back(s);
  }
  return out;
}

long long buffer_bytes_per_rank(Collective c, long long size_bytes, int n) {
  switch (c) {
    case Collective::kAllGather: return size_bytes + size_bytes / n;
    case Collective::kAllToAll: return 2 * size_bytes;
    case Collective::kReduceScatter: return 2 * size_bytes + size_bytes / n;
    case Collective::kBarrier: return 0;
    default: return size_bytes;
  }
}

double algbw_gbps(long long bytes, double time_s) {
  if (time_s <= 0 || bytes <= 0) return 0.0;
  return static_cast<double>(bytes) / time_s / 1e9;
}

std::vector<long long> size_sweep(long long min_bytes, long long max_bytes, long long step_factor,
                                  long long step_bytes) {
  constexpr size_t kMaxSizes = 4096;
  if (min_bytes < 0) throw UsageError(fmt::format("-b/--minbytes {} is negative; give a size >= 0", min_bytes));
  if (max_bytes < min_bytes)
    throw UsageError(fmt::format("-e/--maxbytes {} is below -b/--minbytes {}; give -e >= -b", max_bytes, min_bytes));
  if (step_factor < 1)
    throw UsageError(fmt::format("-f/--stepfactor {} must be >= 1 (1: step by -i/--stepbytes)", step_factor));
  if (step_factor == 1 && step_bytes < 1 && max_bytes > min_bytes)
    throw UsageError(fmt::format("-i/--stepbytes {} must be >= 1 when -f/--stepfactor is 1", step_bytes));
  if (step_factor > 1 && min_bytes == 0 && max_bytes > 0)
    throw UsageError("-b/--minbytes 0 with -f/--stepfactor > 1 never grows; give -b >= 1");
  std::vector<long long> sizes;
  for (long long size = min_bytes; size <= max_bytes;) {
    sizes.push_back(size);
    if (sizes.size() > kMaxSizes)
      throw UsageError(fmt::format("-b {} to -e {} makes more than {} sizes; raise -f/--stepfactor or -i/--stepbytes",
                                   min_bytes, max_bytes, kMaxSizes));
    if (max_bytes == min_bytes) break;
    // Stop before the next size would overflow 64 bits (it would be past max_bytes anyway).
    if (step_factor > 1 ? size > max_bytes / step_factor : size > max_bytes - step_bytes) break;
    size = step_factor > 1 ? size * step_factor : size + step_bytes;
  }
  return sizes;
}

int dtype_size(const std::string& dtype) {
  static const std::map<std::string, int> sizes{{"float32", 4}, {"float16", 2}, {"bfloat16", 2}, {"float64", 8},
                                                {"int32", 4},   {"int64", 8},   {"int8", 1},     {"uint8", 1}};
  if (auto it = sizes.find(dtype); it != sizes.end()) return it->second;
  throw UsageError(
      fmt::format("-d/--datatype '{}' is not supported; use float32, float16, bfloat16, float64, int32, "
                  "int64, int8 or uint8",
                  dtype));
}

void check_redop(const std::string& op) {
  if (op != "sum" && op != "prod" && op != "max" && op != "min")
    throw UsageError(fmt::format("-o/--op '{}' is not supported; use sum, prod, max or min", op));
}

Table comm_table(const std::string& title, const std::vector<CommResult>& rows) {
  const std::vector<Col<CommResult>> cols = {
      {{"size_bytes", "size (B)", "bytes", fmtcol::plain()}, [](const CommResult& x) { return Value(x.bytes); }},
      {{"count", "count (elements)", "elements", fmtcol::plain()}, [](const CommResult& x) { return Value(x.count); }},
      {{"type", "type", "", fmtcol::plain()}, [](const CommResult& x) { return Value(x.dtype); }},
      {{"redop", "redop", "", fmtcol::plain()}, [](const CommResult& x) { return Value(x.redop); }},
      {{"root", "root", "", fmtcol::plain()},
       [](const CommResult& x) { return Value(static_cast<long long>(x.root)); }},
      {{"time_us", "time (us)", "us", fmtcol::fixed(2)}, [](const CommResult& x) { return Value(x.time_us); }},
      // A barrier moves no payload: no bandwidth to show.
      {{"algbw_gbps", "algbw (GB/s)", "GB/s", fmtcol::fixed(3)},
       [](const CommResult& x) { return x.bytes > 0 ? Value(x.algbw_gbps) : Value(); }},
      {{"busbw_gbps", "busbw (GB/s)", "GB/s", fmtcol::fixed(3)},
       [](const CommResult& x) { return x.bytes > 0 ? Value(x.busbw_gbps) : Value(); }},
      // -1: not checked.
      {{"wrong", "#wrong", "elements", fmtcol::plain()},
       [](const CommResult& x) { return x.wrong < 0 ? Value() : Value(x.wrong); }},
      // The CPU cores the ranks' processes kept busy (schema 1.16; absent in older files): on
      // CPU ranks the share of their cores the collective takes, which predict uses.
      {{"cpu_cores", "CPU cores", "cores", fmtcol::fixed(2)},
       [](const CommResult& x) { return x.cpu_cores ? Value(*x.cpu_cores) : Value(); }},
      {{"time_us_max_over_ranks", "max time (us)", "us", fmtcol::fixed(2), /*in_text=*/false},
       [](const CommResult& x) { return Value(x.time_us_max_over_ranks); }},
  };
  return make_table("comm", title, {}, cols, rows);
}

BusbwVerdict min_busbw_verdict(const std::vector<CommResult>& rows, double min_gbps) {
  // Group the allreduce rows by their group (world size and label, in order of appearance).
  std::vector<std::pair<std::string, std::vector<const CommResult*>>> groups;
  for (const auto& r : rows) {
    if (r.collective != "allreduce" || r.world_size < 2) continue;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == r.label; });
    if (it == groups.end()) {
      groups.push_back({r.label, {}});
      it = groups.end() - 1;
    }
    it->second.push_back(&r);
  }
  if (groups.empty())
    throw UsageError(
        "--min-busbw judges allreduce on a group of >= 2 ranks, and none was measured; add allreduce to "
        "--collectives and a world size >= 2");
  BusbwVerdict v;
  std::string parts;
  for (const auto& [label, rs] : groups) {
    long long largest = 0;
    for (const auto* r : rs) largest = std::max(largest, r->bytes);
    double sum = 0;
    int k = 0;
    long long smallest_large = largest;
    for (const auto* r : rs)
      if (4 * r->bytes >= largest) {
        sum += r->busbw_gbps;
        ++k;
        smallest_large = std::min(smallest_large, r->bytes);
      }
    const double mean = k ? sum / k : 0.0;
    const bool ok = mean >= min_gbps;
    v.pass = v.pass && ok;
    parts += fmt::format("{}{} {:.3f} GB/s over {} size(s) {}..{} B{}", parts.empty() ? "" : "; ", label, mean, k,
                         smallest_large, largest, ok ? "" : " (short)");
  }
  v.line =
      fmt::format("min-busbw: {}: allreduce busbw (mean over sizes >= 1/4 of the largest) {} {} the limit {:g} GB/s",
                  v.pass ? "PASS" : "FAIL", parts, v.pass ? "reaches" : "does not reach", min_gbps);
  return v;
}

}  // namespace ddpbench
