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

#include "core/util/errors.hpp"
#include <ATen/autocast_mode.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/softmax.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/reducer.hpp>

#include <torch/nn/options/conv.h>

#include <c10/util/Exception.h>
#include <c10/util/Logging.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#if __has_include(<ATen/ops/scaled_dot_product_attention.h>)
#include <ATen/ops/scaled_dot_product_attention.h>
#endif

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

template <typename T, typename = void>
struct has_get_backend_by_device : std::false_type {};
template <typename T>
struct has_get_backend_by_device<T,
                                 std::void_t<decltype(std::declval<T&>().getBackend(std::declval<c10::DeviceType>()))>>
    : std::true_type {};

/// Shuts a process group down the way the linked torch's Python destroy_process_group does
/// (torch/distributed/distributed_c10d.py), before the group is dropped, and returns what it
/// called, for the teardown trace ("" when nothing):
///   * a c10d::ProcessGroup with shutdown() (torch 2.9+: `pg.shutdown()`, which shuts down
///     each of its backends): "c10d::ProcessGroup::shutdown()";
///   * torch 2.x before that (_shutdown_backend: the group's CUDA backend, when it is a
///     ProcessGroupNCCL with shutdown(), finalizes and destroys its communicators and joins
///     its watchdog): "ProcessGroupNCCL::shutdown()"; a Gloo group: "" (nothing to call);
///   * torch 1.13: "" (no shutdown; ~ProcessGroupNCCL aborts the communicators).
/// A group that is not shut down is freed by its destructor when the last reference goes
/// (torch 2.x's ~ProcessGroupNCCL then aborts and warns). Throws what shutdown() throws.
template <typename PG>
const char* shutdown(const c10::intrusive_ptr<PG>& pg) {
  if (!pg) return "";
  if constexpr (has_shutdown<PG>::value) {
    pg->shutdown();
    return "c10d::ProcessGroup::shutdown()";
  } else if constexpr (has_get_backend_by_device<PG>::value) {
#if DDPBENCH_HAVE_NCCL
    using NCCL = typename dependent<PG, c10d::ProcessGroupNCCL>::type;
    if constexpr (has_shutdown<NCCL>::value) {
      decltype(pg->getBackend(c10::DeviceType::CUDA)) backend;  // c10d::Backend (torch 2.x only)
      try {
        backend = pg->getBackend(c10::DeviceType::CUDA);
      } catch (const c10::Error&) {
        return "";  // no CUDA backend: a Gloo group on CPUs
      }
      if (auto* nccl = dynamic_cast<NCCL*>(backend.get())) {
        nccl->shutdown();
        return "ProcessGroupNCCL::shutdown()";
      }
    }
#endif
    return "";
  } else {
    return "";
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
  /// Unused parameters' gradients are not allreduced (torch 2.7+; kReducerSkipsUnusedParams).
  bool skip_all_reduce_unused_params = false;
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
                               a.skip_all_reduce_unused_params, /*use_python_reducer=*/false,
                               /*bucket_bytes_cap_list=*/std::vector<int64_t>{});
  } else if constexpr (std::is_constructible_v<R, Tensors, Buckets, PGPtr, std::vector<bool>, int64_t, bool, bool,
                                               Names, int64_t, bool, bool>) {
    // torch 2.7 .. 2.8
    return std::make_shared<R>(std::move(a.params), std::move(a.bucket_indices), std::move(a.process_group),
                               std::move(a.expect_sparse_gradients), a.bucket_bytes_cap, a.find_unused_parameters,
                               a.gradient_as_bucket_view, std::move(a.param_names), a.first_bucket_bytes_cap,
                               a.skip_all_reduce_unused_params, /*use_python_reducer=*/false);
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

/// True when the linked torch's c10d::Reducer takes skip_all_reduce_unused_params (torch 2.7+:
/// the constructors make_reducer passes it to, with or without a trailing bucket_bytes_cap_list);
/// before, DDP has no such setting and `run --skip-all-reduce-unused-params` is refused.
inline constexpr bool kReducerSkipsUnusedParams =
    std::is_constructible_v<c10d::Reducer, std::vector<at::Tensor>, std::vector<std::vector<size_t>>,
                            c10::intrusive_ptr<c10d::ProcessGroup>, std::vector<bool>, int64_t, bool, bool,
                            std::unordered_map<size_t, std::string>, int64_t, bool, bool> ||
    std::is_constructible_v<c10d::Reducer, std::vector<at::Tensor>, std::vector<std::vector<size_t>>,
                            c10::intrusive_ptr<c10d::ProcessGroup>, std::vector<bool>, int64_t, bool, bool,
                            std::unordered_map<size_t, std::string>, int64_t, bool, bool, std::vector<int64_t>>;

// ---------------------------------------------------------------- conv padding
/// The explicit padding (H, W) of Conv2d options, or {-1, -1} for "valid"/"same".
/// torch 1.13 keeps it in a c10::variant, 2.x in a std::variant: the unqualified visit()
/// is found by argument-dependent lookup in whichever namespace the variant lives.
template <typename Options>
std::array<int64_t, 2> conv2d_padding(const Options& o) {
  return visit(
      [](const auto& p) -> std::array<int64_t, 2> {
        using P = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<P, torch::ExpandingArray<2>>) return {(*p)[0], (*p)[1]};
        else return {-1, -1};
      },
      o.padding());
}

// ---------------------------------------------------------------- attention
namespace detail {
template <typename T, typename = void>
struct has_sdpa : std::false_type {};
// Unqualified call: found by argument-dependent lookup in namespace at, if it exists.
template <typename T>
struct has_sdpa<T, std::void_t<decltype(scaled_dot_product_attention(std::declval<const T&>(), std::declval<const T&>(),
                                                                     std::declval<const T&>()))>> : std::true_type {};
}  // namespace detail

/// True when the linked torch has the fused at::scaled_dot_product_attention (2.0+).
inline constexpr bool kHasFusedAttention = detail::has_sdpa<at::Tensor>::value;

/// softmax(q k^T / sqrt(d)) v for q, k, v of shape [N, heads, S, d]: the fused
/// scaled_dot_product_attention where the linked torch has it (flash / memory-efficient
/// kernels on GPUs), else the same formula from matmul and softmax.
template <typename T = at::Tensor>
T attention(const T& q, const T& k, const T& v) {
  if constexpr (detail::has_sdpa<T>::value) {
    return scaled_dot_product_attention(q, k, v);
  } else {
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
    return at::matmul(at::softmax(at::matmul(q, k.transpose(-2, -1)) * scale, -1), v);
  }
}

/// Causal attention: attention() with key positions after the query's masked (a decoder's
/// self-attention), q, k, v [N, heads, T, d]. The fused scaled_dot_product_attention with
/// is_causal where the linked torch has it, else the masked softmax (scores above the
/// diagonal set to -inf).
template <typename T = at::Tensor>
T causal_attention(const T& q, const T& k, const T& v) {
  if constexpr (detail::has_sdpa<T>::value) {
    return scaled_dot_product_attention(q, k, v, c10::optional<T>(), 0.0, /*is_causal=*/true);
  } else {
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
    const int64_t t = q.size(-2), s = k.size(-2);
    auto scores = at::matmul(q, k.transpose(-2, -1)) * scale;
    const auto future = at::ones({t, s}, q.options().dtype(at::kBool)).triu(s - t + 1);
    scores = scores.masked_fill(future, -std::numeric_limits<double>::infinity());
    return at::matmul(at::softmax(scores, -1), v);
  }
}

}  // namespace ddpbench::compat

// ---------------------------------------------------------------- out of memory
namespace ddpbench::compat {

/// True when `e` is an allocator running out of memory (`ddpbench find-max-bs` catches
/// these and goes on). The CUDA caching allocator throws c10::OutOfMemoryError (torch
/// 1.13 and 2.x both have the type: c10/util/Exception.h). The CPU allocator throws a
/// plain c10::Error in both: "DefaultCPUAllocator: can't allocate memory: you tried to
/// allocate N bytes" (alloc_cpu.cpp), so its words decide; older messages said "not enough
/// memory". Small allocations outside libtorch's allocator (operator new) throw
/// std::bad_alloc. A c10::Error saying "CUDA out of memory" (a cuDNN/cuBLAS workspace
/// whose failure is rethrown with the allocator's words) counts too.
inline bool is_out_of_memory(const std::exception& e) {
  if (dynamic_cast<const c10::OutOfMemoryError*>(&e) != nullptr) return true;
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) return true;
  const auto* ce = dynamic_cast<const c10::Error*>(&e);
  return is_out_of_memory_message(ce ? ce->what_without_backtrace() : e.what());
}

/// True when `e` is oneDNN refusing to create a primitive ("could not create a primitive",
/// dnnl::error through ATen's mkldnn kernels). torch 2.x's oneDNN allocates a primitive's
/// scratchpad at creation, so under a data-size limit this is how an allocation failure
/// surfaces; elsewhere it may mean an unsupported shape, so callers decide whether it is memory.
inline bool is_onednn_primitive_failure(const std::exception& e) {
  const auto* ce = dynamic_cast<const c10::Error*>(&e);
  return std::string(ce ? ce->what_without_backtrace() : e.what()).find("could not create a primitive") !=
         std::string::npos;
}

}  // namespace ddpbench::compat

// ---------------------------------------------------------------- autocast
// torch 1.13 spells autocast per device kind (set_enabled for CUDA, set_cpu_enabled,
// set_autocast_gpu_dtype / set_autocast_cpu_dtype); torch 2.4+ takes the device type
// (set_autocast_enabled(device, on), set_autocast_dtype(device, dtype)). These
// never-defined templates lose overload resolution to a real function of either
// spelling; where one is absent, the call resolves to them, which the traits below see.
namespace at::autocast {
struct ddpbench_absent {};
template <typename... A>
ddpbench_absent set_autocast_enabled(A&&...);
template <typename... A>
ddpbench_absent set_autocast_dtype(A&&...);
template <typename... A>
ddpbench_absent set_enabled(A&&...);
template <typename... A>
ddpbench_absent set_cpu_enabled(A&&...);
template <typename... A>
ddpbench_absent set_autocast_gpu_dtype(A&&...);
template <typename... A>
ddpbench_absent set_autocast_cpu_dtype(A&&...);
}  // namespace at::autocast

namespace ddpbench::compat {

inline constexpr bool kAutocastPerDevice =
    !std::is_same_v<decltype(at::autocast::set_autocast_enabled(c10::DeviceType::CUDA, true)),
                    at::autocast::ddpbench_absent>;

// The 1.13 branches below are compiled on torch 2.x too (these are not templates), where
// those spellings are deprecated: silence that warning here only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/// Turns autocast on for `device`'s type with `dtype` (kHalf, kBFloat16), as Python's
/// torch.autocast does on entry. Throws c10::Error for a dtype the device's autocast
/// does not support (torch 1.13's CPU autocast takes only bfloat16).
inline void enable_autocast(const c10::Device& device, c10::ScalarType dtype) {
  if constexpr (kAutocastPerDevice) {
    at::autocast::set_autocast_dtype(device.type(), dtype);
    at::autocast::set_autocast_enabled(device.type(), true);
  } else if (device.is_cuda()) {
    at::autocast::set_autocast_gpu_dtype(dtype);
    at::autocast::set_enabled(true);
  } else {
    at::autocast::set_autocast_cpu_dtype(dtype);
    at::autocast::set_cpu_enabled(true);
  }
}

/// Turns autocast off for `device`'s type and clears the cast-weight cache, as Python's
/// torch.autocast does on exit.
inline void disable_autocast(const c10::Device& device) {
  if constexpr (kAutocastPerDevice) {
    at::autocast::set_autocast_enabled(device.type(), false);
  } else if (device.is_cuda()) {
    at::autocast::set_enabled(false);
  } else {
    at::autocast::set_cpu_enabled(false);
  }
  at::autocast::clear_cache();
}

#pragma GCC diagnostic pop

/// Raises libtorch's C++ log threshold to FATAL, so c10d's socket retries and warnings
/// ("The server socket has failed to bind ...") do not print around ddpbench's own
/// one-line errors, unless the user asked for them with TORCH_CPP_LOG_LEVEL (PyTorch's
/// knob). libtorch logs through glog where it was built with it (Debian's 1.13:
/// FLAGS_minloglevel) and through c10's own logger otherwise (pip wheels:
/// FLAGS_caffe2_log_level); C10_USE_GLOG says which.
inline void quiet_torch_logs() {
  const char* user = std::getenv("TORCH_CPP_LOG_LEVEL");
  if (user && *user) return;
#ifdef C10_USE_GLOG
  fLI::FLAGS_minloglevel = 3;  // google::GLOG_FATAL
#else
  FLAGS_caffe2_log_level = 3;  // c10's FATAL
#endif
}

/// Frees the memory of `t`'s storage while every tensor viewing it (parameters, tensors
/// autograd saved) stays valid as metadata, as PyTorch FSDP frees a flat parameter with
/// `flat_param._typed_storage()._resize_(0)` (torch/distributed/fsdp/_utils.py
/// _free_storage). c10::StorageImpl::set_data_ptr_noswap and set_nbytes(size_t) exist in
/// torch 1.13 and 2.x. No-op when already freed.
inline void free_storage(const at::Tensor& t) {
  c10::StorageImpl* s = t.storage().unsafeGetStorageImpl();
  if (s->nbytes() == 0) return;
  s->set_data_ptr_noswap(at::DataPtr(nullptr, t.device()));
  s->set_nbytes(static_cast<size_t>(0));
}

/// Gives `t`'s storage `nbytes` of fresh (uninitialised) memory from the device's
/// allocator, the inverse of free_storage (FSDP's _alloc_storage: storage._resize_(size)).
/// No-op when the storage already holds that many bytes.
inline void alloc_storage(const at::Tensor& t, size_t nbytes) {
  c10::StorageImpl* s = t.storage().unsafeGetStorageImpl();
  if (s->nbytes() == nbytes) return;
  at::Allocator* a = s->allocator() ? s->allocator() : c10::GetAllocator(t.device().type());
  s->set_data_ptr_noswap(a->allocate(nbytes));
  s->set_nbytes(nbytes);
}

}  // namespace ddpbench::compat

// ---------------------------------------------------------------- Module::clone
#include <torch/nn/module.h>

namespace ddpbench::compat {
namespace detail {
template <typename T>
struct clone_arg;
template <typename R, typename C, typename A>
struct clone_arg<R (C::*)(A) const> {
  using type = A;
};
}  // namespace detail

/// The parameter of torch::nn::Module::clone, read off the member itself: `const
/// c10::optional<Device>&` in torch 1.13, `const std::optional<Device>&` in 2.x, so an
/// override (engine/bench/data_parallel.hpp, what torch::nn::parallel::replicate calls)
/// matches either.
using ModuleCloneArg = detail::clone_arg<decltype(&torch::nn::Module::clone)>::type;

}  // namespace ddpbench::compat

// ---------------------------------------------------------------- CUDA allocator stats
// torch 1.13: c10::cuda::CUDACachingAllocator::getDeviceStats(int) / resetPeakStats(int),
// DeviceStats in that namespace. torch 2.x: the same names take a c10::DeviceIndex and
// DeviceStats moved to c10::CachingDeviceAllocator (2.5+; still what getDeviceStats
// returns). Both have allocated_bytes / reserved_bytes as arrays indexed by StatType whose
// index 0 is AGGREGATE (all pools); the enum itself moved namespaces, so index 0 is used.
// Compiled only where the CUDA header exists (a CUDA build).
#if defined(DDPBENCH_WITH_CUDA) && __has_include(<c10/cuda/CUDACachingAllocator.h>)
#define DDPBENCH_HAVE_CUDA_ALLOCATOR_STATS 1
#include <c10/cuda/CUDACachingAllocator.h>
namespace ddpbench::compat {

/// Peaks of the CUDA caching allocator on one device since its last reset, bytes.
struct CudaMemoryPeaks {
  int64_t allocated_bytes = 0;  ///< allocated_bytes[AGGREGATE].peak
  int64_t reserved_bytes = 0;   ///< reserved_bytes[AGGREGATE].peak
};

/// Reads the caching allocator's peaks of `device` (getDeviceStats; `auto`, since the
/// DeviceStats type moved between versions; the argument converts to int or DeviceIndex).
inline CudaMemoryPeaks cuda_memory_peaks(c10::DeviceIndex device) {
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device);
  return {static_cast<int64_t>(stats.allocated_bytes[0].peak), static_cast<int64_t>(stats.reserved_bytes[0].peak)};
}

/// Resets the caching allocator's peak stats of `device` (Python's torch.cuda.reset_peak_memory_stats).
inline void cuda_reset_peak_memory_stats(c10::DeviceIndex device) {
  c10::cuda::CUDACachingAllocator::resetPeakStats(device);
}

/// Returns the caching allocator's unused cached blocks on every device to the driver
/// (torch.cuda.empty_cache(); CUDACachingAllocator::emptyCache, whose later versions take a
/// memory-pool id that defaults to the allocator's own).
inline void cuda_empty_cache() { c10::cuda::CUDACachingAllocator::emptyCache(); }

}  // namespace ddpbench::compat
#else
#define DDPBENCH_HAVE_CUDA_ALLOCATOR_STATS 0
#endif

// ---------------------------------------------------------------- lazy CUDA initialisation
#include <ATen/Context.h>

namespace ddpbench::compat {
namespace detail {
template <typename C, typename = void>
struct has_lazy_init_device : std::false_type {};
template <typename C>
struct has_lazy_init_device<C, std::void_t<decltype(std::declval<C&>().lazyInitDevice(c10::DeviceType::CUDA))>>
    : std::true_type {};
}  // namespace detail

/// Initialises CUDA in this process once, as Python's torch.cuda._lazy_init does before
/// torch.cuda.set_device (torch/csrc/cuda/Module.cpp: device_lazy_init first): CUDAHooks::init
/// sizes the caching allocator per device (CUDACachingAllocator::init), without which its
/// per-device calls (resetPeakStats, getDeviceStats, setMemoryFraction) throw "Invalid device
/// argument". torch 2.6+ spells it at::globalContext().lazyInitDevice(kCUDA) (lazyInitCUDA
/// is deprecated there and warns), older torches lazyInitCUDA(). Throws c10::Error in a build
/// without CUDA; call it for CUDA devices only.
template <typename C = at::Context>
void lazy_init_cuda() {
  C& ctx = at::globalContext();
  if constexpr (detail::has_lazy_init_device<C>::value) ctx.lazyInitDevice(c10::DeviceType::CUDA);
  else ctx.lazyInitCUDA();
}

}  // namespace ddpbench::compat

// ---------------------------------------------------------------- the autograd engine's device threads
#include <torch/csrc/autograd/engine.h>

namespace ddpbench::compat {
namespace detail {
// Names Engine::device_ready_queues_ (protected: one ready queue per device thread the engine
// started, torch/csrc/autograd/engine.h, both in torch 1.13 and 2.x) through a class derived
// from it, never constructed. Where a torch makes the member private or drops it, the first
// overload fails to substitute and the count is unknown (-1).
template <typename E>
struct EngineProbe : E {
  template <typename X = E>
  static auto device_queues(int) -> decltype(&EngineProbe<X>::device_ready_queues_) {
    return &EngineProbe<X>::device_ready_queues_;
  }
  template <typename X = E>
  static std::nullptr_t device_queues(...) {
    return nullptr;
  }
};
}  // namespace detail

/// Device threads `engine` started (Engine::start_device_threads: one per device of the
/// device types that do not run on the CPU queue, on the first backward that needs them;
/// none on CPU-only machines), or -1 where the linked torch does not let it be read. Read
/// it from the thread that ran the backward passes, after they finished.
template <typename E = torch::autograd::Engine>
int autograd_device_threads_started(E& engine) {
  const auto member = detail::EngineProbe<E>::template device_queues<E>(0);
  if constexpr (std::is_same_v<decltype(member), const std::nullptr_t>) {
    return -1;
  } else {
    return static_cast<int>((engine.*member).size());
  }
}

}  // namespace ddpbench::compat

// ---------------------------------------------------------------- TCPStore
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <cstring>

namespace ddpbench::compat {
namespace detail {
template <typename O, typename = void>
struct has_use_libuv : std::false_type {};
template <typename O>
struct has_use_libuv<O, std::void_t<decltype(std::declval<O&>().useLibUV)>> : std::true_type {};
template <typename S, typename = void>
struct has_is_libuv_backend : std::false_type {};
template <typename S>
struct has_is_libuv_backend<S, std::void_t<decltype(std::declval<const S&>().isLibUvBackend())>> : std::true_type {};
}  // namespace detail

/// A c10d::TCPStore (client, or server when opts.isServer) with the linked torch's server
/// backend: torch 2.4+ asks for libuv by default (TCPStoreOptions::useLibUV = true); a torch
/// built without libuv (Debian's 2.6) refuses that in the constructor, before any socket is
/// opened ("use_libuv was requested but PyTorch was build without libuv support",
/// torch/csrc/distributed/c10d/TCPStore.cpp), and the classic backend is used instead, as
/// Python's USE_LIBUV=0 would. USE_LIBUV=0 in the environment (the knob PyTorch's
/// torch/distributed/rendezvous.py reads) asks for the classic backend directly. torch 1.13
/// has only the classic one. Throws what the constructor throws otherwise.
template <typename O = c10d::TCPStoreOptions>
c10::intrusive_ptr<c10d::Store> make_tcp_store(const std::string& host, O opts) {
  if constexpr (detail::has_use_libuv<O>::value) {
    const char* env = std::getenv("USE_LIBUV");
    if (env && std::strcmp(env, "0") == 0) opts.useLibUV = false;
    if (opts.useLibUV) {
      try {
        return c10::make_intrusive<c10d::TCPStore>(host, opts);
      } catch (const c10::Error& e) {
        if (std::strstr(e.what_without_backtrace(), "without libuv support") == nullptr) throw;
        opts.useLibUV = false;
      }
    }
  }
  return c10::make_intrusive<c10d::TCPStore>(host, opts);
}

/// The backend of the TCPStore server that `store` (made by make_tcp_store with isServer)
/// runs: "libuv" (TCPStoreLibUvBackend.cpp, an epoll event loop: each request costs the same
/// at any number of connections) or "poll" (the classic TCPStoreMasterDaemon of
/// TCPStoreBackend.cpp, which calls poll() over every open connection at each wake-up: a
/// request costs O(connections), the ranks' requests O(N^2) together). torch 1.13 has only
/// the classic one. "" when `store` is not a c10d::TCPStore.
template <typename S = c10d::TCPStore>
std::string tcp_store_server_backend(const c10::intrusive_ptr<c10d::Store>& store) {
  const auto* tcp = dynamic_cast<const S*>(store.get());
  if (!tcp) return "";
  if constexpr (detail::has_is_libuv_backend<S>::value) return tcp->isLibUvBackend() ? "libuv" : "poll";
  return "poll";
}

}  // namespace ddpbench::compat

// ---------------------------------------------------------------- the TCPStore wire (ddpbench's store check)
// torch 2.x declares the wire protocol in TCPStoreBackend.hpp (QueryType, validationMagicNumber) and
// its servers expect a VALIDATE message first on every connection; torch 1.13 keeps QueryType in
// TCPStore.cpp, where ADD is the fourth entry (SET, COMPARE_SET, GET, ADD, ...), and has no VALIDATE.
#if __has_include(<torch/csrc/distributed/c10d/TCPStoreBackend.hpp>)
#include <torch/csrc/distributed/c10d/TCPStoreBackend.hpp>
#define DDPBENCH_STORE_VALIDATES 1
#else
#define DDPBENCH_STORE_VALIDATES 0
#endif

#include <cstdint>
#include <vector>

namespace ddpbench::compat {

/// Bytes of TCPStore's reply to store_check_request: the key's new value, an int64.
inline constexpr std::size_t kStoreCheckReplyBytes = sizeof(std::int64_t);

/// The bytes the linked torch's TCPStore client sends for `add(key, 0)` on a new connection
/// (torch/csrc/distributed/c10d/TCPStore.cpp: a QueryType byte, then the key as a uint64
/// length and its bytes after TCPStore's "/" key prefix, then the int64 addend, in host byte
/// order; torch 2.x sends VALIDATE + validationMagicNumber first, as TCPStore::validate does).
/// Checked against both servers: after it, Python's TCPStore.get(key) reads b"0" on torch
/// 1.13 and on 2.6 (classic server).
inline std::vector<unsigned char> store_check_request(const std::string& key) {
  std::vector<unsigned char> out;
  auto put = [&out](const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    out.insert(out.end(), b, b + n);
  };
#if DDPBENCH_STORE_VALIDATES
  const auto validate = c10d::detail::QueryType::VALIDATE;
  const std::uint32_t magic = c10d::detail::validationMagicNumber;
  put(&validate, 1);
  put(&magic, sizeof magic);
  const auto add = c10d::detail::QueryType::ADD;
#else
  const std::uint8_t add = 3;  // QueryType::ADD in torch 1.13's TCPStore.cpp
#endif
  put(&add, 1);
  const std::string wire_key = "/" + key;  // TCPStore::keyPrefix_, which its client puts before every key
  const std::uint64_t len = wire_key.size();
  put(&len, sizeof len);
  put(wire_key.data(), wire_key.size());
  const std::int64_t zero = 0;
  put(&zero, sizeof zero);
  return out;
}

/// Whether `reply` (kStoreCheckReplyBytes bytes) is a TCPStore's answer to
/// store_check_request: the value 0 (every rank adds 0 to a key nothing else writes).
inline bool store_check_reply_ok(const unsigned char* reply) {
  std::int64_t v = 0;
  std::memcpy(&v, reply, sizeof v);
  return v == 0;
}

}  // namespace ddpbench::compat

// ---------------------------------------------------------------- Optimizer::zero_grad
#include <torch/optim/optimizer.h>

namespace ddpbench::compat {
namespace detail {
template <typename O, typename = void>
struct has_zero_grad_set_to_none : std::false_type {};
template <typename O>
struct has_zero_grad_set_to_none<O, std::void_t<decltype(std::declval<O&>().zero_grad(true))>> : std::true_type {};
}  // namespace detail

/// The default of `set_to_none` in the linked torch's Optimizer.zero_grad: torch 2.0 made it
/// True in Python (torch/optim/optimizer.py) and, in the same release, gave libtorch's
/// torch::optim::Optimizer::zero_grad the parameter `bool set_to_none = true`
/// (torch/csrc/api/include/torch/optim/optimizer.h); torch 1.x's C++ zero_grad() takes none
/// and Python's default there is False. So: the parameter exists <=> the default is True.
inline constexpr bool kZeroGradSetToNoneByDefault = detail::has_zero_grad_set_to_none<torch::optim::Optimizer>::value;

}  // namespace ddpbench::compat

// ---------------------------------------------------------------- DDP's first bucket
#include <torch/version.h>

namespace ddpbench::compat {

/// Whether DistributedDataParallel caps its first bucket at bucket_cap_mb when the caller
/// passes bucket_cap_mb (torch/nn/parallel/distributed.py, _ddp_init_helper: the Reducer's
/// first_bucket_bytes_cap is `dist._DEFAULT_FIRST_BUCKET_BYTES if self.bucket_bytes_cap_default
/// else self.bucket_bytes_cap`), rather than always at dist._DEFAULT_FIRST_BUCKET_BYTES (1 MiB).
/// No C++ API changed with it, so the major version decides: checked against Python DDP on
/// 1.13 (always 1 MiB) and on 2.6 (the explicit cap); the 2.x releases before 2.6 were not checked.
inline constexpr bool kExplicitBucketCapCapsFirstBucket = TORCH_VERSION_MAJOR >= 2;

}  // namespace ddpbench::compat

// ---------------------------------------------------------------- every GPU path compiled
// DDPBENCH_REQUIRE_GPU_PATHS (CMake option of the same name, set by scripts/check-torch2.sh):
// every file that includes this header fails to compile unless each CUDA-guarded path is in.
#ifdef DDPBENCH_REQUIRE_GPU_PATHS
#ifndef DDPBENCH_WITH_CUDA
#error "DDPBENCH_REQUIRE_GPU_PATHS: DDPBENCH_WITH_CUDA is off (CUDA timers, find-max-bs's CUDA OOM path, dataparallel)"
#endif
#if !DDPBENCH_HAVE_NCCL
#error "DDPBENCH_REQUIRE_GPU_PATHS: ProcessGroupNCCL is not compiled in (USE_C10D_NCCL undefined)"
#endif
#if !DDPBENCH_HAVE_CUDA_ALLOCATOR_STATS
#error "DDPBENCH_REQUIRE_GPU_PATHS: the CUDA caching-allocator stats are not compiled in"
#endif
#endif
