// tiling-missing-barrier-race.cu at 64 threads (two warps): without the
// second __syncthreads the next round's store into the tile races with the
// neighbour still reading the previous round.
// barrier-check: --block 64
// expect race
#include <cuda_runtime.h>

__global__ void tiled_sum(const int *in, int *out) {
  __shared__ int tile[64];
  int t = threadIdx.x;
  int acc = 0;
  for (int k = 0; k < 2; ++k) {
    tile[t] = in[k * blockDim.x + t];
    __syncthreads();
    acc += tile[(t + 1) % blockDim.x];
  }
  out[t] = acc;
}
