// A warp reduction in shared memory with __syncwarp between the steps,
// then a shuffle reduction (its data is not modelled: only which lanes
// touch which words, and the barriers).
// barrier-check: --block 8
// expect ok
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
