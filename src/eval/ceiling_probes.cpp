#include "eval/ceiling_probes.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "eval/builtin_kernels.hpp"
#include "eval/candidates.hpp"
#include "eval/cuda_raii.hpp"
#include "eval/cuda_task_state.hpp"

namespace soltune {
namespace {

// Median of `reps` timed runs of `launch` (after two untimed ones), in milliseconds. Ungated (see
// timing_loop.hpp): the probes run for milliseconds, so the few microseconds the CPU takes to
// queue the launch after the start event are noise, and the median drops a repetition that a
// descheduled CPU stretched.
template <typename F>
double median_ms(int reps, F launch) {
  Event e0, e1;
  std::vector<double> ms;
  for (int i = 0; i < reps + 2; ++i) {
    SOLTUNE_CUDA(cudaEventRecord(e0.get()));
    launch();
    SOLTUNE_CUDA(cudaEventRecord(e1.get()));
    SOLTUNE_CUDA(cudaEventSynchronize(e1.get()));
    float t = 0;
    SOLTUNE_CUDA(cudaEventElapsedTime(&t, e0.get(), e1.get()));
    if (i >= 2) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}


struct WgmmaRates {
  double bf16 = 0, f16 = 0, fp8 = 0;
  std::string text = "not run (sm_90a only)";
};

// wgmma reaches the tensor ceilings on sm_90 where mma.sync stays near 70% of them. The probes
// compile apart, for sm_90a; a probe that does not compile or load leaves the datasheet's figures,
// with the reason.
WgmmaRates wgmma_rates(const DeviceInfo& dev, const Compiler& compiler, void* out) {
  WgmmaRates w;
  const auto r = compiler.compile(CompileRequest{wgmma_probe_source(), "soltune_wgmma_probe.cu", wgmma_probe_name_expressions(), "sm_90a", {}});
  if (!r.ok) {
    w.text = "probe did not compile: " + r.log.substr(0, 200);
    return w;
  }
  LoadedModule m;
  std::string log;
  if (LoadedModule::load(r, m, log) != cudaSuccess) {
    w.text = "probe did not load: " + log;
    return w;
  }
  // One block of three warpgroups per SM, each issuing 4 wgmmas per iteration: a few milliseconds.
  int iters = 2048;
  void* args[] = {&out, &iters};
  Geometry g;
  g.grid = {dev.sms, 1, 1};
  g.block = {384, 1, 1};
  auto rate = [&](const char* probe, double flops_per_wgmma) {
    const double ms = median_ms(6, [&] { SOLTUNE_CUDA(launch_kernel(m.at(probe), g, args, nullptr)); });
    return flops_per_wgmma * 4 * iters * 3 * static_cast<double>(dev.sms) / (ms * 1e-3);
  };
  w.f16 = rate("soltune_wgmma_probe<0>", 2.0 * 64 * 256 * 16);
  w.bf16 = rate("soltune_wgmma_probe<1>", 2.0 * 64 * 256 * 16);
  w.fp8 = rate("soltune_wgmma_probe<2>", 2.0 * 64 * 256 * 32);
  char buf[96];
  std::snprintf(buf, sizeof buf, "bf16 %.0f, f16 %.0f, fp8 %.0f", w.bf16 / 1e12, w.f16 / 1e12, w.fp8 / 1e12);
  w.text = buf;
  return w;
}

}  // namespace

Ceilings measure_device_ceilings(const DeviceInfo& dev_, const Compiler& compiler_, const std::string& arch_) {
  // Bandwidth: the better of a 16-byte copy kernel and cudaMemcpy over 2 GiB (bytes read + written,
  // far beyond L2); FP32: an FMA probe. The ceilings T_SOL is computed from; the datasheet stays beside.
  const auto r = compiler_.compile(CompileRequest{builtin_kernels_source(), "soltune_builtins.cu", builtin_name_expressions(), arch_, {}});
  if (!r.ok) throw Error("soltune's builtin kernels do not compile:\n" + r.log);
  LoadedModule m;
  std::string log;
  if (LoadedModule::load(r, m, log) != cudaSuccess) throw Error(log);

  // 2 GiB each way where memory allows: large enough that launch and tail costs vanish.
  const size_t bytes = std::min(size_t(2) << 30, static_cast<size_t>(dev_.mem_bytes / 8)) / 256 * 256;
  DeviceBuffer a(bytes), b(bytes);
  SOLTUNE_CUDA(cudaMemset(a.get(), 1, bytes));
  const double memcpy_ms = median_ms(20, [&] { SOLTUNE_CUDA(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice)); });
  void* src = a.get();
  void* dst = b.get();
  long long words = static_cast<long long>(bytes / 16);
  void* copy_args[] = {&src, &dst, &words};
  Geometry cg;
  cg.grid = {static_cast<int64_t>(dev_.sms) * 8, 1, 1};
  cg.block = {256, 1, 1};
  Geometry flat;
  flat.grid = {(words + 127) / 128, 1, 1};
  flat.block = {128, 1, 1};
  const double copy_ms =
      std::min(median_ms(20, [&] { SOLTUNE_CUDA(launch_kernel(m.at("soltune_copy_probe"), cg, copy_args, nullptr)); }),
               median_ms(20, [&] { SOLTUNE_CUDA(launch_kernel(m.at("soltune_copy_probe_flat"), flat, copy_args, nullptr)); }));
  // Reading only: the same 2 GiB, the better of the read probe and the L2 flush's kernel.
  void* sink = b.get();  // written only if the buffer's xor hits a magic value: never with memset 1
  void* read_args[] = {&src, &words, &sink};
  const double read_ms =
      std::min(median_ms(20, [&] { SOLTUNE_CUDA(launch_kernel(m.at("soltune_read_probe"), cg, read_args, nullptr)); }),
               median_ms(20, [&] { SOLTUNE_CUDA(launch_kernel(m.at("soltune_flush_read"), cg, read_args, nullptr)); }));

  const unsigned blocks = static_cast<unsigned>(dev_.sms) * 8, threads = 256;
  DeviceBuffer out(size_t(blocks) * threads * sizeof(float));
  void* p = out.get();
  int iters = 8192;
  float fa = 0.999f, fb = 1e-3f;
  void* fma_args[] = {&p, &iters, &fa, &fb};
  Geometry g;
  g.grid = {blocks, 1, 1};
  g.block = {threads, 1, 1};
  const double fma_ms = median_ms(6, [&] { SOLTUNE_CUDA(launch_kernel(m.at("soltune_fma_probe"), g, fma_args, nullptr)); });

  int mma_iters = 256;
  void* mma_args[] = {&p, &mma_iters};
  auto mma_rate_of = [&](const char* probe, double flops_per_mma) {
    const double ms = median_ms(6, [&] { SOLTUNE_CUDA(launch_kernel(m.at(probe), g, mma_args, nullptr)); });
    return flops_per_mma * 4 * mma_iters * (double(blocks) * threads / 32) / (ms * 1e-3);
  };
  const double mma_rate = mma_rate_of("soltune_mma_probe<1>", 4096);
  const double f16_rate = mma_rate_of("soltune_mma_probe<0>", 4096);
  const double fp8_rate = dev_.cc() >= 89 ? mma_rate_of("soltune_mma_probe<2>", 8192) : 0;

  Ceilings c;
  c.mem_bw = 2.0 * static_cast<double>(bytes) / (std::min(memcpy_ms, copy_ms) * 1e-3);
  c.read_bw = static_cast<double>(bytes) / (read_ms * 1e-3);
  c.fp32 = 2.0 * 8 * iters * double(blocks) * threads / (fma_ms * 1e-3);
  // A tensor ceiling is the best probe or the datasheet, whichever is higher: a probe below the
  // datasheet did not reach the limit, one above it ran at a clock above the datasheet's.
  const auto wgmma = dev_.cc() == 90 ? wgmma_rates(dev_, compiler_, p) : WgmmaRates{};
  c.tensor_16_probe = std::max({mma_rate, f16_rate, wgmma.bf16, wgmma.f16});
  c.tensor_8_probe = std::max(fp8_rate, wgmma.fp8);
  c.tensor_16 = std::max(c.tensor_16_probe, dev_.datasheet.tensor_16);
  c.tensor_8 = dev_.datasheet.tensor_8 > 0 || c.tensor_8_probe > 0 ? std::max(c.tensor_8_probe, dev_.datasheet.tensor_8) : 0;
  char src_text[512];
  std::snprintf(src_text, sizeof src_text,
                "measured: copy kernel %.0f GB/s, cudaMemcpy %.0f GB/s (best kept), read %.0f GB/s, FP32 FMA; tensor "
                "probes in TFLOP/s: mma.sync bf16 %.0f, f16 %.0f, fp8 %.0f; wgmma %s",
                2.0 * static_cast<double>(bytes) / (copy_ms * 1e6), 2.0 * static_cast<double>(bytes) / (memcpy_ms * 1e6),
                c.read_bw / 1e9, mma_rate / 1e12, f16_rate / 1e12, fp8_rate / 1e12, wgmma.text.c_str());
  c.source = src_text;
  return c;
}

}  // namespace soltune
