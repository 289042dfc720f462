// A block of 48 threads meets at named barrier 1 with a count of 64: its
// second warp has 16 lanes, and the hardware counts a warp's arrival as
// 32 whatever its lanes (PTX ISA, barrier{.cta}: the barrier records the
// warp's arrival), so the phase completes and the write before it is
// ordered before the read after it. Until session 38 the model counted
// 48 arrivals and answered deadlock, where an H200 completes the kernel
// (docs/semantics.md, "A warp counts whole").
// barrier-check: --block 48
// expect ok
#include <cuda_runtime.h>

__global__ void partial(int *out) {
  __shared__ int x;
  if (threadIdx.x == 40) x = 7;
  asm volatile("bar.sync 1, 64;" ::: "memory");
  if (threadIdx.x == 5) out[0] = x;
}
