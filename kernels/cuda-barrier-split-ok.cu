// cuda::barrier's split arrive/wait (CUDA Programming Guide 7.26.2,
// "Temporal Splitting"): every thread stores its element, arrives, does
// independent work, then waits on its token before reading its
// neighbour's. Thread 0 initializes the barrier with the block size
// before a __syncthreads (7.26.3). nvcc lowers arrive/wait to
// mbarrier.arrive and a try_wait/test_wait retry loop (docs/ptx.md).
// Four warps.
// barrier-check: --block 128
// expect ok
#include <cuda/barrier>

__global__ void split(int *out) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ int s[128];
  if (threadIdx.x == 0)
    init(&bar, blockDim.x);
  __syncthreads();
  s[threadIdx.x] = (int)threadIdx.x * 3;
  auto token = bar.arrive();
  int independent = (int)threadIdx.x + 1;
  bar.wait(std::move(token));
  out[threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x] + independent;
}
