// __syncthreads inside `if (tid < n)`: with n (parameter 1) below the block
// size only part of the block reaches the barrier, which the CUDA guide
// makes undefined ("Synchronization Functions").
// barrier-check: --block 8 --param 1=4
// expect ub(divergent-barrier)
#include <cuda_runtime.h>

__global__ void guarded(int *data, int n) {
  __shared__ int s[8];
  int t = threadIdx.x;
  if (t < n) {
    s[t] = data[t];
    __syncthreads();
    data[t] = s[(t + 1) % n];
  }
}
