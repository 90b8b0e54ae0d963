// Correctness reference: the crossing number of each point in double precision, one point per
// thread; the answer (0 or 1) as double, as every reference writes its outputs.
template <int NV>
__global__ void pnpoly_reference(const float2* __restrict__ points, const float* __restrict__ vertices,
                                 double* __restrict__ inside, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double px = points[i].x, py = points[i].y;
  bool c = false;
  for (int a = 0, b = NV - 1; a < NV; b = a++) {
    const double ax = vertices[2 * a], ay = vertices[2 * a + 1], bx = vertices[2 * b], by = vertices[2 * b + 1];
    if ((ay > py) != (by > py) && px < (bx - ax) * (py - ay) / (by - ay) + ax) c = !c;
  }
  inside[i] = c ? 1.0 : 0.0;
}
