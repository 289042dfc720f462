// cuda-barrier-split-ok.cu with the neighbour's element read between the
// arrive and the wait: nothing orders the read after the neighbour's
// store, a race. Eight threads: with the race, each thread's wait is its
// last step, and a wait right before a thread's end is not fused when the
// end also drops the block barrier, so the ends interleave (issue 36).
// barrier-check: --block 8
// expect race
#include <cuda/barrier>

__global__ void split(int *out) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ int s[128];
  if (threadIdx.x == 0)
    init(&bar, blockDim.x);
  __syncthreads();
  s[threadIdx.x] = (int)threadIdx.x * 3;
  auto token = bar.arrive();
  int early = s[(threadIdx.x + 1) % blockDim.x];
  bar.wait(std::move(token));
  out[threadIdx.x] = early;
}
