// A token reused two phases later (CUDA Programming Guide 7.26.4: a wait
// must use a token of the current or the immediately preceding phase,
// anything else is undefined). The second round waits with the first
// round's token, which names a phase two back: ub(stale-phase); and that
// token was already waited on once (a token is used once: ub(token-misuse)).
// Two threads: each arrives three times on one barrier, and the arrivals
// of more threads interleave into too many states (issue 36).
// barrier-check: --block 2
// expect ub(stale-phase), ub(token-misuse)
#include <cuda/barrier>

__global__ void reused(int *out) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ int s[8];
  if (threadIdx.x == 0)
    init(&bar, blockDim.x);
  __syncthreads();
  auto first = bar.arrive();
  bar.wait(std::move(first));
  (void)bar.arrive();
  (void)bar.arrive();
  bar.wait(std::move(first));
  s[threadIdx.x] = 1;
  out[threadIdx.x] = s[threadIdx.x];
}
