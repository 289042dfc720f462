// The same 48-thread block at named barrier 1 with a count of 96: two
// warps count 64, so the phase never completes (docs/semantics.md, "A
// warp counts whole"; the partial warp counts 32, not 48 - 32 = 16).
// barrier-check: --block 48
// expect deadlock
#include <cuda_runtime.h>

__global__ void short_count(int *out) {
  asm volatile("bar.sync 1, 96;" ::: "memory");
  out[threadIdx.x] = 1;
}
