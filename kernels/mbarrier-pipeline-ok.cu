// A warp-specialized two-stage pipeline on mbarrier parity waits, as
// CUTLASS's ClusterBarrier writes them in inline PTX: warp 0's lane 0
// produces into stage s after waiting until the consumers have released
// it (empty[s]) and arrives on full[s]; warp 1 waits on full[s] with all
// its lanes, reads the stage, and its lane 0 arrives on empty[s]. Four
// iterations, parities flipping every second one.
// barrier-check: --block 64
// expect ok
#include <cuda_runtime.h>

__device__ __forceinline__ unsigned smem(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void mbar_init(unsigned long long *b, unsigned n) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(b)), "r"(n) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned long long *b) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem(b)) : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned long long *b, unsigned parity) {
  asm volatile(
      "{\n\t.reg .pred p;\n"
      "WAIT_%=:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t"
      "@!p bra WAIT_%=;\n\t}" ::"r"(smem(b)),
      "r"(parity)
      : "memory");
}

__global__ void pipeline(const int *in, int *out) {
  __shared__ unsigned long long full[2], empty[2];
  __shared__ int stage[2];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < 2; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 1);
    }
  }
  __syncthreads();
  int acc = 0;
  for (int k = 0; k < 4; ++k) {
    int s = k % 2;
    unsigned phase = (k / 2) % 2;
    if (warp == 0) {
      if (lane == 0) {
        mbar_wait(&empty[s], phase ^ 1);
        stage[s] = in[k];
        mbar_arrive(&full[s]);
      }
    } else {
      mbar_wait(&full[s], phase);
      acc += stage[s];
      __syncwarp();
      if (lane == 0)
        mbar_arrive(&empty[s]);
    }
  }
  if (warp == 1)
    out[lane] = acc;
}
