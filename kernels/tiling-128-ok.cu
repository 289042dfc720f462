// The tiled sum of tiling-ok.cu at a real block size, 128 threads (four
// warps): each thread stores its tile element, __syncthreads, reads its
// neighbour's, __syncthreads before the next round overwrites the tile.
// Lane by lane; a warp arrives at bar.sync as one, and each thread's
// accesses between two barriers are taken one thread at a time
// (docs/explorer.md, "Reductions", item 8), so the search is linear in the
// threads.
// barrier-check: --block 128
// expect ok
#include <cuda_runtime.h>

__global__ void tiled_sum(const int *in, int *out) {
  __shared__ int tile[128];
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
