// The TMA pipeline of tma-pipeline-ok.cu with the producer chosen as
// CUTLASS chooses it: `warp == 0 && elect_one_sync()`, here libcu++'s
// cuda::ptx::elect_sync(0xffffffff) (PTX `elect.sync _|p, membermask`).
// Every lane of warp 0 runs the election in each k-iteration; the leader
// (lane 0, the lowest non-exited lane of the mask) waits for the empty
// stage, arms the full barrier and issues the bulk copy. Before session 39
// the election's predicate was an unknown value and the kernel was
// inconclusive.
// barrier-check: --block 64 --arch sm_90
// expect ok
#include <cuda/ptx>
#include <cuda_runtime.h>

namespace ptx = cuda::ptx;

constexpr int kStages = 2, kIters = 4, kTile = 64;

__device__ __forceinline__ void wait_parity(uint64_t *b, uint32_t parity) {
  while (!ptx::mbarrier_try_wait_parity(b, parity)) {
  }
}

__global__ void tma_pipeline(const int *in, int *out) {
  __shared__ alignas(128) int stage[kStages][kTile / 4];
  __shared__ alignas(128) int result[kTile / 4];
  __shared__ uint64_t full[kStages], empty[kStages];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], 1);
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  int acc = 0;
  for (int k = 0; k < kIters; ++k) {
    int s = k % kStages;
    unsigned phase = (k / kStages) % 2;
    if (warp == 0 && ptx::elect_sync(0xffffffff)) {
      wait_parity(&empty[s], phase ^ 1);
      ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[s], kTile);
      ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, stage[s], in + k * (kTile / 4), kTile, &full[s]);
    } else if (warp == 1) {
      wait_parity(&full[s], phase);
      acc += stage[s][lane % (kTile / 4)];
      __syncwarp();
      if (lane == 0) {
        ptx::mbarrier_arrive(&empty[s]);
      }
    }
  }
  if (warp == 1 && lane == 0) {
    result[0] = acc;
    ptx::fence_proxy_async(ptx::space_shared);
    ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, out, result, kTile);
    ptx::cp_async_bulk_commit_group();
    ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>());
  }
}
