// Tiled sum with __syncthreads: each round loads a tile into shared memory,
// synchronizes, reads a neighbour's element and synchronizes again before
// the next round overwrites the tile.
// barrier-check: --block 8
// expect ok
#include <cuda_runtime.h>

__global__ void tiled_sum(const int *in, int *out) {
  __shared__ int tile[8];
  int t = threadIdx.x;
  int acc = 0;
  for (int k = 0; k < 2; ++k) {
    tile[t] = in[k * blockDim.x + t];
    __syncthreads();
    acc += tile[(t + 1) % blockDim.x];
    __syncthreads();
  }
  out[t] = acc;
}
