// The same barrier written in both branches of a divergent `if` (warp 0
// and warp 1 take different branches): two instruction sites complete one
// phase of barrier 0, which __syncthreads does not allow.
// barrier-check: --block 64
// expect ub(divergent-barrier)
#include <cuda_runtime.h>

__global__ void both_branches(int *data) {
  __shared__ int s[2];
  int t = threadIdx.x;
  if (t < 32) {
    if (t == 0)
      s[0] = data[0];
    __syncthreads();
    if (t == 0)
      data[0] = s[1];
  } else {
    if (t == 32)
      s[1] = -data[1];
    __syncthreads();
    if (t == 32)
      data[1] = s[0] + 1;
  }
}
