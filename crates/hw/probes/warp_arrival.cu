// Lane-level probes of the warp-arrival reading (docs/semantics.md, "A warp
// arrives as one"): each case launches one block, lets it run 500 ms, and
// reads which threads got past their barrier from host-mapped memory.
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <cuda_runtime.h>

__global__ void over(volatile int *done) {          // 3 warps, count 64
  int t = threadIdx.x;
  if (t < 32) asm volatile("bar.sync 0, 64;" ::: "memory");
  else if (t < 64) asm volatile("bar.arrive 0, 64;" ::: "memory");
  else asm volatile("bar.sync 0, 64;" ::: "memory");
  done[t] = 1;
}
__global__ void over_late(volatile int *done) {     // 3 warps, count 64, warp 2 late
  int t = threadIdx.x;
  if (t >= 64) { long long s = clock64(); while (clock64() - s < 20000000) { } }
  if (t < 32) asm volatile("bar.sync 0, 64;" ::: "memory");
  else if (t < 64) asm volatile("bar.arrive 0, 64;" ::: "memory");
  else asm volatile("bar.sync 0, 64;" ::: "memory");
  done[t] = 1;
}
__global__ void mismatch(volatile int *done) {      // arrive 64 vs sync 32
  int t = threadIdx.x;
  if (t < 32) asm volatile("bar.arrive 1, 64;" ::: "memory");
  else asm volatile("bar.sync 1, 32;" ::: "memory");
  done[t] = 1;
}
__global__ void pipeline(volatile int *done, int *buf) {  // 4 rounds, ok
  int t = threadIdx.x;
  for (int r = 0; r < 4; r++) {
    if (t < 32) {
      asm volatile("bar.sync 2, 64;" ::: "memory");
      if (t == 0) buf[0] = r;
      asm volatile("bar.arrive 1, 64;" ::: "memory");
    } else {
      asm volatile("bar.arrive 2, 64;" ::: "memory");
      asm volatile("bar.sync 1, 64;" ::: "memory");
      if (t == 32) done[96 + r] = buf[0] + 1;
    }
  }
  done[t] = 1;
}

int main(int argc, char **argv) {
  int which = atoi(argv[1]);
  int *h; cudaHostAlloc(&h, 128 * sizeof(int), cudaHostAllocMapped);
  for (int i = 0; i < 128; i++) h[i] = 0;
  int *d; cudaHostGetDevicePointer(&d, h, 0);
  int *buf; cudaMalloc(&buf, 4);
  if (which == 0) over<<<1, 96>>>(d);
  if (which == 3) over_late<<<1, 96>>>(d);
  if (which == 1) mismatch<<<1, 64>>>(d);
  if (which == 2) pipeline<<<1, 64>>>(d, buf);
  usleep(500000);
  cudaError_t e = cudaStreamQuery(0);
  int n = (which == 0 || which == 3) ? 96 : 64, past = 0;
  for (int i = 0; i < n; i++) past += h[i];
  printf("case %d: %s, %d of %d threads past the barrier; warps past:", which,
         e == cudaSuccess ? "finished" : (e == cudaErrorNotReady ? "still running (hung)" : cudaGetErrorString(e)), past, n);
  for (int w = 0; w < n / 32; w++) { int c = 0; for (int i = 0; i < 32; i++) c += h[w * 32 + i]; printf(" w%d=%d", w, c); }
  if (which == 2) printf(" rounds seen by lane 32: %d %d %d %d", h[96], h[97], h[98], h[99]);
  printf("\n");
  fflush(stdout);
  _exit(0);
}
