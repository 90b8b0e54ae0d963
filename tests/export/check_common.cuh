#pragma once
// What the programs that check an exported header share (tests/export/*_check.cu): CUDA error
// checks that fail a case, the device's dispatch inputs, a flushed median timing, and the call of an
// exported function with the scratch where its header takes scratch.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <type_traits>
#include <vector>

namespace check_common {

inline float to_float(float v) { return v; }
inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }


// Fails the enclosing case (a function returning bool) with the call and CUDA's error.
#define CHECK(call)                                                                        \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) {                                                               \
      std::printf("FAIL %s: %s\n", #call, cudaGetErrorString(e_));                         \
      return false;                                                                        \
    }                                                                                      \
  } while (0)

// The device's values that exported dispatch takes.
struct Device {
  double sms = 0, cc = 0, optin = 0, l2 = 0;
  static Device current() {
    Device d;
    int v = 0, major = 0, minor = 0;
    cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0);
    d.sms = v;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
    d.cc = major * 10 + minor;
    cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
    d.optin = v;
    cudaDeviceGetAttribute(&v, cudaDevAttrL2CacheSize, 0);
    d.l2 = v;
    return d;
  }
};

inline bool is_prime(long long v) {
  if (v < 2) return false;
  for (long long d = 2; d * d <= v; ++d)
    if (v % d == 0) return false;
  return true;
}

// An L2 flush: a buffer twice the L2 read and written between timed runs.
struct Flush {
  void* p = nullptr;
  size_t bytes = 0;
  explicit Flush(double l2) : bytes(static_cast<size_t>(2 * l2)) { cudaMalloc(&p, bytes); }
  ~Flush() { cudaFree(p); }
  void operator()() const { cudaMemsetAsync(p, 0x5a, bytes); }
};

template <typename F> float median_us(F&& f, const Flush& flush) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  f();  // warm-up
  std::vector<float> t;
  for (int i = 0; i < 10; ++i) {
    flush();
    cudaEventRecord(a);
    f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms * 1000.0f);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Calls an exported function with the scratch where its header takes scratch.
template <typename F, typename... A> cudaError_t launch_with(F f, void* s, size_t bytes, A... a) {
  if constexpr (std::is_invocable_v<F, A..., void*, size_t, cudaStream_t>) return f(a..., s, bytes, cudaStream_t{});
  else return f(a..., cudaStream_t{});
}


// A sweep's view of problem P's exported functions for one dtype: the launch, the dispatch and its
// plan, and the tolerances (problem.yaml's: |y - ref| <= atol + rtol * |ref|). Inside a template
// `Api<T>` declared by the sweep.
#define CHECK_API(P, DT, TYPE, ATOL, RTOL)                 \
  template <> struct Api<TYPE> {                           \
    static constexpr const char* dtype = #DT;              \
    static constexpr double atol = ATOL, rtol = RTOL;      \
    static constexpr auto launch = &P##_##DT;              \
    static constexpr auto choice = &P##_##DT##_choice;     \
    using Plan = P##_##DT##_plan;                          \
  };

// Scratch for the plans that take it: one allocation every call shares.
constexpr size_t kScratchBytes = size_t{256} << 20;

// The median of a sorted copy.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// Without a GPU a check reports that and passes: the header compiled, nothing can run.
inline bool no_device() {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) return false;
  std::printf("no CUDA device: nothing to check\n");
  return true;
}

// A sweep's last lines (the medians of time over copy time, the verdict) and its exit code.
inline int sweep_verdict(bool ok, const std::vector<double>& f32_ratios, const std::vector<double>& bf16_ratios) {
  std::printf("median time / copy time over the sweep: f32 %.2fx, bf16 %.2fx\n", median(f32_ratios), median(bf16_ratios));
  std::printf(ok ? "all checks passed\n" : "some checks FAILED\n");
  return ok ? 0 : 1;
}

inline const char* source_name(int source) {
  static const char* kSource[] = {"tuned", "nearest", "fallback"};
  return source >= 0 && source <= 2 ? kSource[source] : "none";
}

}  // namespace check_common
