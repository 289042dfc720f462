// A shared-memory histogram: the bins are cleared, atomicAdd picks a bin
// from the input data (an address the checker cannot know: atomics never
// race and their values are not tracked, so the access is left out), and
// the block's counts are added to the global histogram.
// barrier-check: --block 8
// expect ok
#include <cuda_runtime.h>

__global__ void histogram(const unsigned char *in, unsigned *out) {
  __shared__ unsigned bins[4];
  int t = threadIdx.x;
  if (t < 4)
    bins[t] = 0;
  __syncthreads();
  atomicAdd(&bins[in[blockIdx.x * blockDim.x + t] & 3], 1u);
  __syncthreads();
  if (t < 4)
    atomicAdd(&out[t], bins[t]);
}
