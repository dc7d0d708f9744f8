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

/// The same for samples already sorted ascending (no copy, no sort): summaries sort once
/// and read every percentile from the sorted copy. Throws as percentile().
double percentile_sorted(const std::vector<double>& sorted, double q);

/// Arithmetic mean. Throws std::invalid_argument on an empty input.
double mean(const std::vector<double>& samples);

/// Sample standard deviation (divisor n-1); 0 for fewer than two samples.
double stddev(const std::vector<double>& samples);

/// Two-sided 95% quantile of Student's t distribution with `dof` degrees of freedom
/// (t_{0.975, dof}): 12.706 for 1, 2.093 for 19, 1.96 in the limit. Exact table values
/// for 1..30 (NIST/SEMATECH e-Handbook, table 1.3.6.7.2), the Cornish-Fisher expansion
/// beyond (error < 1e-4). Throws std::invalid_argument for dof < 1.
double t95(int dof);

/// Half-width of the 95% confidence interval of the mean: t95(n-1) * s / sqrt(n),
/// s the sample standard deviation (Student's t, so it holds at small n).
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
  int n = 0;  ///< number of samples pooled over ranks
  double p5_s = 0, p50_s = 0, p75_s = 0, p90_s = 0,
         p95_s = 0;  ///< percentiles of the pooled samples (p5_s: 0 in files of schema < 1.10)
  double min_s = 0, max_s = 0;
  double mean_s = 0, stddev_s = 0;  ///< of the pooled samples
  double ci95_s = 0;   ///< half-width of the 95% CI of the mean (Student's t), over iteration_means (see there)
  int iterations = 0;  ///< measured iterations (length of iteration_means)
  double cv = 0;       ///< coefficient of variation (stddev / mean) of iteration_means
  double ex_per_s_per_gpu = 0;  ///< batch per rank / p50_s (ex/s of one rank at the median)
  double ex_per_s_total = 0;    ///< world size * ex_per_s_per_gpu (aggregate ex/s)
};

/// Summarises the samples (seconds per iteration) of every rank of a run of
/// `world_size` ranks with `batch_per_rank` examples each: percentiles, extremes, mean
/// and standard deviation over the pooled samples (as benchmark.py pools them), the CI
/// over iteration_means. Throws std::invalid_argument when there is no sample.
Summary summarize(const std::vector<std::vector<double>>& per_rank_s, long long batch_per_rank, int world_size);

}  // namespace ddpbench
