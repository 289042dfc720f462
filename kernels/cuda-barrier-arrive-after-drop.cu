// A thread that dropped out (arrive_and_drop, CUDA Programming Guide
// 7.26.6) later arrives again to publish data. It no longer counts in the
// expected arrivals, so its two arrivals can carry the barrier two phases
// past the reader's first token before the reader waits with it (7.26.4:
// a token of the current or the preceding phase only): ub(stale-phase).
// mbarrier has no participation list: the extra arrival lands in
// whichever phase is open. The data is volatile so that nvcc keeps the
// accesses; PTX reads volatile accesses as relaxed atomics, which never
// race, so the stale token is the whole verdict.
// barrier-check: --block 2
// expect ub(stale-phase)
#include <cuda/barrier>

__global__ void after_drop(int *out) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ int s;
  if (threadIdx.x == 0)
    init(&bar, blockDim.x);
  __syncthreads();
  if (threadIdx.x == 1) {
    bar.arrive_and_drop();
    *(volatile int *)&s = 42;
    (void)bar.arrive();
  } else {
    bar.arrive_and_wait();
    bar.arrive_and_wait();
    out[0] = *(volatile int *)&s;
  }
}
