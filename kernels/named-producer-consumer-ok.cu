// Warp-specialized producer/consumer on named barrier 1 (as WEFT checks):
// warp 0 arrives with bar.arrive after four of its lanes fill the buffer,
// warp 1 waits with bar.sync and four lanes read it; both name 64 threads,
// the two warps.
// barrier-check: --block 64
// expect ok
#include <cuda_runtime.h>

__global__ void producer_consumer(const int *in, int *out) {
  __shared__ int buf[4];
  int t = threadIdx.x;
  if (t < 32) {
    if (t < 4)
      buf[t] = in[t];
    asm volatile("bar.arrive 1, 64;" ::: "memory");
  } else {
    asm volatile("bar.sync 1, 64;" ::: "memory");
    if (t < 36)
      out[t - 32] = buf[35 - t];
  }
}
