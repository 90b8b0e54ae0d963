#pragma once
// RAII owners for CUDA objects. Destructors never throw: after a sticky error the release calls
// fail, and the device reset that follows reclaims everything anyway.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/measure.hpp"
#include "eval/cuda_check.hpp"

namespace soltune {

template <typename T, typename Release>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T h) : h_(h) {}
  Handle(Handle&& o) noexcept : h_(std::exchange(o.h_, T{})) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, T{});
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  T get() const { return h_; }
  explicit operator bool() const { return h_ != T{}; }
  void reset() {
    if (h_ != T{}) Release{}(h_);
    h_ = T{};
  }
  // Forget the handle without releasing it (after a device reset destroyed it already).
  void abandon() { h_ = T{}; }

 private:
  T h_{};
};

struct FreeDevice { void operator()(void* p) const { (void)cudaFree(p); } };
struct DestroyEvent { void operator()(cudaEvent_t e) const { (void)cudaEventDestroy(e); } };
struct UnloadLibrary { void operator()(cudaLibrary_t l) const { (void)cudaLibraryUnload(l); } };
struct DestroyStream { void operator()(cudaStream_t s) const { (void)cudaStreamDestroy(s); } };
struct FreeHost { void operator()(void* p) const { (void)cudaFreeHost(p); } };

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    void* p = nullptr;
    if (bytes) SOLTUNE_CUDA(cudaMalloc(&p, bytes));
    h_ = Handle<void*, FreeDevice>(p);
  }
  void* get() const { return h_.get(); }
  size_t bytes() const { return bytes_; }
  void abandon() { h_.abandon(); }

 private:
  Handle<void*, FreeDevice> h_;
  size_t bytes_ = 0;
};

// Page-locked host memory mapped into the device's address space, zeroed: kernels read what the
// host stores there while they run (the timing gate's counter).
class MappedHostBuffer {
 public:
  MappedHostBuffer() = default;
  explicit MappedHostBuffer(size_t bytes) : bytes_(bytes) {
    void* p = nullptr;
    SOLTUNE_CUDA(cudaHostAlloc(&p, bytes, cudaHostAllocMapped));
    h_ = Handle<void*, FreeHost>(p);
    std::memset(p, 0, bytes);
    SOLTUNE_CUDA(cudaHostGetDevicePointer(&device_, p, 0));
  }
  void* host() const { return h_.get(); }
  void* device() const { return device_; }
  size_t bytes() const { return bytes_; }
  void abandon() {
    h_.abandon();
    device_ = nullptr;
  }

 private:
  Handle<void*, FreeHost> h_;
  void* device_ = nullptr;
  size_t bytes_ = 0;
};

class Event {
 public:
  Event() {
    cudaEvent_t e;
    SOLTUNE_CUDA(cudaEventCreate(&e));
    h_ = Handle<cudaEvent_t, DestroyEvent>(e);
  }
  cudaEvent_t get() const { return h_.get(); }
  void abandon() { h_.abandon(); }

 private:
  Handle<cudaEvent_t, DestroyEvent> h_;
};

// A loaded CUBIN (cudaLibraryLoadData: no driver API linked, context-independent loading).
class Library {
 public:
  Library() = default;
  // Returns the CUDA error rather than throwing: a CUBIN that does not load is a candidate's failure.
  static cudaError_t load(const std::vector<char>& cubin, Library& out) {
    cudaLibrary_t l = nullptr;
    auto e = cudaLibraryLoadData(&l, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
    if (e == cudaSuccess) out.h_ = Handle<cudaLibrary_t, UnloadLibrary>(l);
    return e;
  }
  cudaError_t kernel(const std::string& lowered_name, cudaKernel_t& k) const {
    return cudaLibraryGetKernel(&k, h_.get(), lowered_name.c_str());
  }
  // A __device__ or __constant__ variable's address and size in the current context.
  cudaError_t global(const std::string& name, void*& ptr, size_t& bytes) const {
    return cudaLibraryGetGlobal(&ptr, &bytes, h_.get(), name.c_str());
  }
  void abandon() { h_.abandon(); }

 private:
  Handle<cudaLibrary_t, UnloadLibrary> h_;
};

// The launch configuration of a geometry, with its cluster as an attribute where it has one, and
// programmatic stream serialisation where the launch may overlap the one before it.
struct LaunchConfig {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attrs[2]{};
  LaunchConfig(const Geometry& g, cudaStream_t s, bool programmatic = false) {
    config.gridDim = dim3(static_cast<unsigned>(g.grid[0]), static_cast<unsigned>(g.grid[1]), static_cast<unsigned>(g.grid[2]));
    config.blockDim = dim3(static_cast<unsigned>(g.block[0]), static_cast<unsigned>(g.block[1]), static_cast<unsigned>(g.block[2]));
    config.dynamicSmemBytes = static_cast<size_t>(g.smem);
    config.stream = s;
    config.attrs = attrs;
    if (g.cluster_blocks() > 1) {
      auto& a = attrs[config.numAttrs++];
      a.id = cudaLaunchAttributeClusterDimension;
      a.val.clusterDim.x = static_cast<unsigned>(g.cluster[0]);
      a.val.clusterDim.y = static_cast<unsigned>(g.cluster[1]);
      a.val.clusterDim.z = static_cast<unsigned>(g.cluster[2]);
    }
    if (programmatic) {
      auto& a = attrs[config.numAttrs++];
      a.id = cudaLaunchAttributeProgrammaticStreamSerialization;
      a.val.programmaticStreamSerializationAllowed = 1;
    }
  }
  LaunchConfig(const LaunchConfig&) = delete;  // config.attrs points into this object
  LaunchConfig& operator=(const LaunchConfig&) = delete;
};

// Launches a kernel handle with a geometry; returns CUDA's answer (a candidate's failure is a value).
// A cluster given at launch or a programmatic dependent launch goes through cudaLaunchKernelExC; a
// compile-time cluster (__cluster_dims__) needs nothing here.
inline cudaError_t launch_kernel(cudaKernel_t k, const Geometry& g, void** args, cudaStream_t s,
                                 bool programmatic = false) {
  const LaunchConfig c(g, s, programmatic);
  if (c.config.numAttrs > 0) return cudaLaunchKernelExC(&c.config, reinterpret_cast<const void*>(k), args);
  return cudaLaunchKernel(reinterpret_cast<const void*>(k), c.config.gridDim, c.config.blockDim, args,
                          c.config.dynamicSmemBytes, s);
}

}  // namespace soltune
