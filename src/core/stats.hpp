// Descriptive statistics of per-iteration samples. Torch-free.
#pragma once

#include <vector>

namespace ddpbench {

/// q-th percentile (0 <= q <= 100) of `samples` by linear interpolation between
/// closest ranks: with the samples sorted ascending as x[0..n-1], h = (n-1)*q/100,
/// result = x[floor h] + (h - floor h) * (x[floor h + 1] - x[floor h]).
/// This is numpy.percentile's default ("linear", type 7 of Hyndman & Fan 1996),
/// which PyTorch's benchmarks/distributed/ddp/benchmark.py uses, so numbers compare.
/// Throws std::invalid_argument on an empty input or q outside [0, 100].
double percentile(std::vector<double> samples, double q);

/// Arithmetic mean. Throws std::invalid_argument on an empty input.
double mean(const std::vector<double>& samples);

/// Sample standard deviation (divisor n-1); 0 for fewer than two samples.
double stddev(const std::vector<double>& samples);

/// Half-width of the 95% confidence interval of the mean under a normal
/// approximation: 1.96 * s / sqrt(n), s the sample standard deviation.
/// 0 for fewer than two samples.
double ci95_halfwidth(const std::vector<double>& samples);

/// Per-iteration means across ranks: element i is the mean over ranks of their i-th
/// sample. Ranks of one DDP step wait for each other in the allreduce, so their samples
/// of the same iteration are not independent; statistics that assume independence
/// (confidence intervals, the bootstrap) use these n_iterations values. Falls back to
/// the pooled samples when the ranks hold different numbers of samples.
std::vector<double> iteration_means(const std::vector<std::vector<double>>& per_rank);

/// Summary of per-iteration times, all in seconds, plus throughput.
struct Summary {
  int n = 0;           ///< number of samples pooled over ranks
  double p50_s = 0, p75_s = 0, p90_s = 0, p95_s = 0;  ///< percentiles of the pooled samples
  double min_s = 0, max_s = 0;
  double mean_s = 0, stddev_s = 0;  ///< of the pooled samples
  double ci95_s = 0;  ///< half-width of the 95% CI of the mean, over iteration_means (see there)
  double ex_per_s_per_gpu = 0;  ///< batch per rank / p50_s (ex/s of one rank at the median)
  double ex_per_s_total = 0;    ///< world size * ex_per_s_per_gpu (aggregate ex/s)
};

/// Summarises the samples (seconds per iteration) of every rank of a run of
/// `world_size` ranks with `batch_per_rank` examples each: percentiles, extremes, mean
/// and standard deviation over the pooled samples (as benchmark.py pools them), the CI
/// over iteration_means. Throws std::invalid_argument when there is no sample.
Summary summarize(const std::vector<std::vector<double>>& per_rank_s, long long batch_per_rank, int world_size);

}  // namespace ddpbench
