// Two warp roles that each wait on the barrier the other arrives on only
// after its own wait (WEFT's deadlock negative, PLDI'15): warp 0 waits on
// barrier 0 before arriving on 1, warp 1 waits on 1 before arriving on 0.
// barrier-check: --block 64
// expect deadlock
#include <cuda_runtime.h>

__global__ void cross_wait(int *out) {
  int warp = threadIdx.x / 32;
  if (warp == 0) {
    asm volatile("bar.sync 0, 64;" ::: "memory");
    asm volatile("bar.arrive 1, 64;" ::: "memory");
  } else {
    asm volatile("bar.sync 1, 64;" ::: "memory");
    asm volatile("bar.arrive 0, 64;" ::: "memory");
  }
  if (threadIdx.x % 32 == 0)
    out[warp] = 1;
}
