// The baseline whose time is T_ref: the textbook loop, one point per thread, the polygon read from
// global memory and each edge's slope divided out by every thread.
template <int NV>
__global__ void pnpoly_naive(const float2* points, const float* vertices, int* inside, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float px = points[i].x, py = points[i].y;
  int c = 0;
  for (int a = 0, b = NV - 1; a < NV; b = a++) {
    const float ax = vertices[2 * a], ay = vertices[2 * a + 1], bx = vertices[2 * b], by = vertices[2 * b + 1];
    if ((ay > py) != (by > py) && px < (bx - ax) * (py - ay) / (by - ay) + ax) c = !c;
  }
  inside[i] = c;
}
