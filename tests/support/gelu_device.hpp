#pragma once
// Device code the tests' GELU variants share: reading f32 or bf16 as float, storing a float back,
// and GELU's tanh form as templates/gelu computes it.
namespace soltune::test {

inline const char* kGeluDevice = R"SRC(
__device__ inline float to_f(float v) { return v; }
__device__ inline float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ inline void put(float& d, float v) { d = v; }
__device__ inline void put(__nv_bfloat16& d, float v) { d = __float2bfloat16_rn(v); }
__device__ inline float gelu(float x) {
  const float inner = 0.7978845608028654f * fmaf(0.044715f * x, x * x, x);
  return 0.5f * x * (1.0f + tanhf(inner));
}
)SRC";

}  // namespace soltune::test
