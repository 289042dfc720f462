// Each thread stores its own byte of a shared array (st.shared.u8 at
// distinct bytes, four to a word: no two share a byte, so none conflict),
// then after __syncthreads reads its neighbour's whole 32-bit word
// (ld.shared.u32 over four threads' bytes, ordered by the barrier).
// barrier-check: --block 8
// expect ok
#include <cuda_runtime.h>

__global__ void words_of_bytes(unsigned *out) {
  __shared__ unsigned char b[8];
  int t = threadIdx.x;
  b[t] = (unsigned char)t;
  __syncthreads();
  const unsigned *w = (const unsigned *)b;
  out[t] = w[((t / 4) + 1) % 2];
}
