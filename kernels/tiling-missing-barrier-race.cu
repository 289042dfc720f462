// The tiled sum without the second __syncthreads: the next round's store
// into the tile races with a neighbour still reading the previous round.
// barrier-check: --block 8
// expect race
#include <cuda_runtime.h>

__global__ void tiled_sum(const int *in, int *out) {
  __shared__ int tile[8];
  int t = threadIdx.x;
  int acc = 0;
  for (int k = 0; k < 2; ++k) {
    tile[t] = in[k * blockDim.x + t];
    __syncthreads();
    acc += tile[(t + 1) % blockDim.x];
  }
  out[t] = acc;
}
