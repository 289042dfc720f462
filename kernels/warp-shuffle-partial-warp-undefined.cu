// A warp reduction in shared memory with __syncwarp between the steps,
// then a shuffle reduction over the full mask in a block of 8 threads:
// the first shuffle (offset 16) reads lanes 16-23, which do not exist, so
// its value is undefined (CUDA guide, "Warp Shuffle Functions": an
// inactive source lane). The bug of a warp reduction written for 32 lanes
// and launched on fewer.
// barrier-check: --block 8
// expect ub(syncwarp-mask)
#include <cuda_runtime.h>

__global__ void warp_reduce(const int *in, int *out) {
  __shared__ int s[8];
  unsigned lane = threadIdx.x;
  s[lane] = in[lane];
  __syncwarp();
  for (unsigned off = blockDim.x / 2; off > 0; off /= 2) {
    if (lane < off)
      s[lane] += s[lane + off];
    __syncwarp();
  }
  int v = in[lane];
  for (int off = 16; off > 0; off /= 2)
    v += __shfl_down_sync(0xffffffffu, v, off);
  if (lane == 0)
    out[0] = s[0] + v;
}
