// The producer/consumer where the consumer waits one round more than the
// producer arrives (an off-by-one in the round count): the consumer's
// second bar.sync waits forever for the producer warp.
// barrier-check: --block 64
// expect deadlock
#include <cuda_runtime.h>

__global__ void producer_consumer(const int *in, int *out) {
  __shared__ int buf[4];
  int t = threadIdx.x;
  if (t < 32) {
    if (t < 4)
      buf[t] = in[t];
    asm volatile("bar.arrive 1, 64;" ::: "memory");
  } else {
    for (int round = 0; round < 2; ++round) {
      asm volatile("bar.sync 1, 64;" ::: "memory");
      if (t < 36)
        out[round * 4 + t - 32] = buf[35 - t];
    }
  }
}
