// Every difference between the libtorch versions ddpbench builds against, in one
// place. Choices are made by what compiles (type traits, __has_include), never by
// version numbers. Known shapes:
//   * torch 1.13: ProcessGroupGloo / ProcessGroupNCCL derive from c10d::ProcessGroup;
//     Reducer(params, buckets, per_bucket_size_limits, pg, sparse, cap, find_unused,
//             grad_as_view, names, first_cap).
//   * torch 2.x:  they derive from c10d::Backend and are wrapped in a ProcessGroup
//     with setBackend(); the Reducer lost per_bucket_size_limits and gained
//     (skip_all_reduce_unused_params, use_python_reducer[, bucket_bytes_cap_list]).
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/reducer.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#if defined(USE_C10D_GLOO) && __has_include(<gloo/context.h>)
#define DDPBENCH_HAVE_GLOO 1
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#else
#define DDPBENCH_HAVE_GLOO 0
#endif

#if defined(DDPBENCH_WITH_CUDA) && defined(USE_C10D_NCCL)
#define DDPBENCH_HAVE_NCCL 1
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#else
#define DDPBENCH_HAVE_NCCL 0
#endif

namespace ddpbench::compat {

/// `U`, made dependent on `T` so a discarded `if constexpr` branch naming an API
/// of another torch version is never instantiated.
template <typename T, typename U>
struct dependent {
  using type = U;
};
template <typename T>
inline constexpr bool dependent_false = false;

template <typename T, typename = void>
struct has_shutdown : std::false_type {};
template <typename T>
struct has_shutdown<T, std::void_t<decltype(std::declval<T&>().shutdown())>> : std::true_type {};

template <typename T, typename = void>
struct has_set_bound_device : std::false_type {};
template <typename T>
struct has_set_bound_device<T, std::void_t<decltype(std::declval<T&>().setBoundDeviceId(std::declval<at::Device>()))>>
    : std::true_type {};

/// Turns a backend object into the c10d::ProcessGroup the Reducer and collectives
/// take. torch 1.13: the backend already is a ProcessGroup. torch 2.x: wrap it and
/// register it per device type, as Python's init_process_group does: NCCL for CUDA;
/// Gloo for the CPU and, when the rank's tensors live on a GPU, for CUDA too. With
/// NCCL, 2.x also binds the group to the rank's GPU (setBoundDeviceId), as Python's
/// init_process_group(device_id=...) does, so barrier() knows its device.
template <typename B>
c10::intrusive_ptr<c10d::ProcessGroup> as_process_group(const c10::intrusive_ptr<B>& backend,
                                                        const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                        int size, const at::Device& device, bool is_nccl) {
  if constexpr (std::is_base_of_v<c10d::ProcessGroup, B>) {
    return backend;
  } else {
    using PG = typename dependent<B, c10d::ProcessGroup>::type;
    auto pg = c10::make_intrusive<PG>(store, rank, size);
    const auto type = is_nccl ? PG::BackendType::NCCL : PG::BackendType::GLOO;
    if constexpr (has_set_bound_device<PG>::value) {
      if (is_nccl) pg->setBoundDeviceId(device);
    }
    if (!is_nccl) pg->setBackend(c10::DeviceType::CPU, type, backend);
    if (device.is_cuda()) pg->setBackend(c10::DeviceType::CUDA, type, backend);
    pg->setDefaultBackend(type);
    return pg;
  }
}

/// Shuts a process group down where the linked torch can (2.x: ProcessGroup::shutdown
/// destroys NCCL communicators); a no-op where it cannot (1.13 frees them in the destructor).
template <typename PG>
void shutdown(const c10::intrusive_ptr<PG>& pg) {
  if constexpr (has_shutdown<PG>::value) {
    if (pg) pg->shutdown();
  }
}

/// Arguments of Python DDP's Reducer construction (torch/nn/parallel/distributed.py,
/// _ddp_init_helper), in version-neutral form.
struct ReducerArgs {
  std::vector<at::Tensor> params;
  std::vector<std::vector<size_t>> bucket_indices;  ///< already reversed, as Python does
  std::vector<size_t> per_bucket_size_limits;       ///< reversed with bucket_indices (1.13 only)
  c10::intrusive_ptr<c10d::ProcessGroup> process_group;
  std::vector<bool> expect_sparse_gradients;
  int64_t bucket_bytes_cap = 0;
  bool find_unused_parameters = false;
  bool gradient_as_bucket_view = false;
  std::unordered_map<size_t, std::string> param_names;
  int64_t first_bucket_bytes_cap = 0;
};

/// Constructs a c10d::Reducer with whichever constructor the linked torch has.
template <typename R = c10d::Reducer>
std::shared_ptr<R> make_reducer(ReducerArgs a) {
  using Tensors = std::vector<at::Tensor>;
  using Buckets = std::vector<std::vector<size_t>>;
  using PGPtr = c10::intrusive_ptr<c10d::ProcessGroup>;
  using Names = std::unordered_map<size_t, std::string>;
  if constexpr (std::is_constructible_v<R, Tensors, Buckets, std::vector<size_t>, PGPtr, std::vector<bool>, int64_t,
                                        bool, bool, Names, int64_t>) {
    // torch 1.13 .. 2.2
    return std::make_shared<R>(std::move(a.params), std::move(a.bucket_indices), std::move(a.per_bucket_size_limits),
                               std::move(a.process_group), std::move(a.expect_sparse_gradients), a.bucket_bytes_cap,
                               a.find_unused_parameters, a.gradient_as_bucket_view, std::move(a.param_names),
                               a.first_bucket_bytes_cap);
  } else if constexpr (std::is_constructible_v<R, Tensors, Buckets, PGPtr, std::vector<bool>, int64_t, bool, bool,
                                               Names, int64_t, bool, bool, std::vector<int64_t>>) {
    // torch 2.9+: (..., skip_all_reduce_unused_params, use_python_reducer, bucket_bytes_cap_list)
    return std::make_shared<R>(std::move(a.params), std::move(a.bucket_indices), std::move(a.process_group),
                               std::move(a.expect_sparse_gradients), a.bucket_bytes_cap, a.find_unused_parameters,
                               a.gradient_as_bucket_view, std::move(a.param_names), a.first_bucket_bytes_cap,
                               /*skip_all_reduce_unused_params=*/false, /*use_python_reducer=*/false,
                               /*bucket_bytes_cap_list=*/std::vector<int64_t>{});
  } else if constexpr (std::is_constructible_v<R, Tensors, Buckets, PGPtr, std::vector<bool>, int64_t, bool, bool,
                                               Names, int64_t, bool, bool>) {
    // torch 2.7 .. 2.8
    return std::make_shared<R>(std::move(a.params), std::move(a.bucket_indices), std::move(a.process_group),
                               std::move(a.expect_sparse_gradients), a.bucket_bytes_cap, a.find_unused_parameters,
                               a.gradient_as_bucket_view, std::move(a.param_names), a.first_bucket_bytes_cap,
                               /*skip_all_reduce_unused_params=*/false, /*use_python_reducer=*/false);
  } else if constexpr (std::is_constructible_v<R, Tensors, Buckets, PGPtr, std::vector<bool>, int64_t, bool, bool,
                                               Names, int64_t, bool>) {
    // torch 2.3 .. 2.6: (..., use_python_reducer)
    return std::make_shared<R>(std::move(a.params), std::move(a.bucket_indices), std::move(a.process_group),
                               std::move(a.expect_sparse_gradients), a.bucket_bytes_cap, a.find_unused_parameters,
                               a.gradient_as_bucket_view, std::move(a.param_names), a.first_bucket_bytes_cap,
                               /*use_python_reducer=*/false);
  } else {
    static_assert(dependent_false<R>, "ddpbench: unsupported c10d::Reducer constructor; add it to compat.hpp");
  }
}

}  // namespace ddpbench::compat
