// An early `return` before the barrier: threads past the end leave, the
// rest synchronize without them.
// barrier-check: --block 8 --param 1=6
// expect ub(divergent-barrier)
#include <cuda_runtime.h>

__global__ void early_return(int *data, int n) {
  __shared__ int s[8];
  int t = threadIdx.x;
  if (t >= n)
    return;
  s[t] = data[t];
  __syncthreads();
  data[t] = s[n - 1 - t];
}
