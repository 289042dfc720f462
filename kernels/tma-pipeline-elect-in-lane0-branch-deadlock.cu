// The elected producer of tma-pipeline-elect-ok.cu, with the election
// added to the old lane-0 producer branch (`warp == 0 && lane == 0 &&
// elect_sync(0xffffffff)`, so only lane 0 runs it), and a
// `__syncthreads()` after the main loop. elect.sync waits until every
// non-exited lane its mask names has run it (PTX ISA, elect.sync): lanes
// 1-31 of warp 0 never do, and they wait at the block barrier for lane 0,
// which waits at the election: the producer never issues its first copy,
// and warp 1 waits on full[0] forever. (Without the block barrier lanes
// 1-31 would exit, which releases the election: that kernel is ok.)
// barrier-check: --block 64 --arch sm_90
// expect deadlock
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
    if (warp == 0 && lane == 0 && ptx::elect_sync(0xffffffff)) {
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
  __syncthreads();
  if (warp == 1 && lane == 0) {
    result[0] = acc;
    ptx::fence_proxy_async(ptx::space_shared);
    ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, out, result, kTile);
    ptx::cp_async_bulk_commit_group();
    ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>());
  }
}
