// Point in polygon by the crossing number, written as a macro program the way Kernel Tuner kernels
// are: the knobs arrive as -D definitions (block_size_x, tile_size, method), VERTICES sizes the
// polygon in constant memory, the points come as a plain float2* (read only). Each thread tests
// tile_size points, block_size_x apart, against every edge; an edge's vertices are read once per
// thread for all its points.
#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef tile_size
#define tile_size 1
#endif
#ifndef method
#define method 0
#endif

__constant__ float2 vertices[VERTICES];

__global__ void __launch_bounds__(block_size_x) pnpoly(float2* points, int* inside, long long n) {
  const long long first = static_cast<long long>(blockIdx.x) * (block_size_x * tile_size) + threadIdx.x;
  float px[tile_size], py[tile_size];
  int c[tile_size];
#pragma unroll
  for (int k = 0; k < tile_size; ++k) {
    const long long i = first + static_cast<long long>(k) * block_size_x;
    const float2 p = i < n ? points[i] : make_float2(0.0f, 0.0f);
    px[k] = p.x;
    py[k] = p.y;
    c[k] = 0;
  }
  for (int a = 0, b = VERTICES - 1; a < VERTICES; b = a++) {
    const float2 va = vertices[a], vb = vertices[b];
#if method == 0
    // The edge's inverse slope, once per edge for all the thread's points (inf for a horizontal
    // edge, which the straddle test below never lets through).
    const float slope = (vb.x - va.x) / (vb.y - va.y);
#pragma unroll
    for (int k = 0; k < tile_size; ++k)
      if ((va.y > py[k]) != (vb.y > py[k]) && px[k] < slope * (py[k] - va.y) + va.x) c[k] ^= 1;
#else
    // Multiplied out, no division: the sign of the edge's dy decides which way the test points.
    const float dy = vb.y - va.y, dx = vb.x - va.x;
#pragma unroll
    for (int k = 0; k < tile_size; ++k) {
      const float lhs = (px[k] - va.x) * dy, rhs = dx * (py[k] - va.y);
      if ((va.y > py[k]) != (vb.y > py[k]) && (dy > 0.0f ? lhs < rhs : lhs > rhs)) c[k] ^= 1;
    }
#endif
  }
#pragma unroll
  for (int k = 0; k < tile_size; ++k) {
    const long long i = first + static_cast<long long>(k) * block_size_x;
    if (i < n) inside[i] = c[k];
  }
}
