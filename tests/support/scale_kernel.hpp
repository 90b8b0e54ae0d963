#pragma once
// The small templated kernel the compiler tests compile (each test names the instantiations it needs).
namespace soltune::test {

inline constexpr const char* kScale = R"(
template <typename T, int N>
__global__ void scale(T* x, T a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * a + T(N);
}
)";

}  // namespace soltune::test
