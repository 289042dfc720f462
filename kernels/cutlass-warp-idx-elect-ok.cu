// CUTLASS's role selection: the warp index broadcast from lane 0
// (`canonical_warp_idx_sync()`, `__shfl_sync(0xffffffff, threadIdx.x /
// 32, 0)`), then `warp == 0 && elect_one_sync()` (here libcu++'s
// cuda::ptx::elect_sync). The elected lane of warp 0 writes a shared
// flag, `__syncthreads()` orders it, and every thread reads it. The
// pre-evaluation knows a shuffle from a lower lane (lane 0 is traced
// first) and the election's leader, so the branch is decided; before
// session 39 both were unknown values and the kernel was inconclusive.
// barrier-check: --block 64 --arch sm_90
// expect ok
#include <cuda/ptx>
#include <cuda_runtime.h>

namespace ptx = cuda::ptx;

__device__ __forceinline__ int canonical_warp_idx_sync() {
  return __shfl_sync(0xffffffff, threadIdx.x / 32, 0);
}

__global__ void roles(int *out) {
  __shared__ int flag;
  int warp = canonical_warp_idx_sync();
  if (warp == 0 && ptx::elect_sync(0xffffffff)) {
    flag = 1;
  }
  __syncthreads();
  out[threadIdx.x] = flag;
}
