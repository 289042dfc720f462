// A warp reduction in shared memory with __syncwarp between the steps,
// then a shuffle reduction over the 8 lanes that exist (full mask, width
// 8: a source past the segment leaves a lane its own value). The
// shuffles' values are computed; the data (loads of `in`) is not.
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
  for (int off = 4; off > 0; off /= 2)
    v += __shfl_down_sync(0xffffffffu, v, off, 8);
  if (lane == 0)
    out[0] = s[0] + v;
}
