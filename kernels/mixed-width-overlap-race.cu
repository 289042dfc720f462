// Each thread stores a 32-bit word of a shared array, and then, with no
// barrier between, reads one byte of its neighbour's word through a byte
// pointer (st.shared.u32 against ld.shared.u8 one byte in). The two
// accesses share a byte, so they conflict (PTX ISA, "Memory Consistency
// Model": overlapping accesses, one a write), and nothing orders them.
// barrier-check: --block 8
// expect race
#include <cuda_runtime.h>

__global__ void bytes_of_words(unsigned char *out) {
  __shared__ unsigned int w[8];
  int t = threadIdx.x;
  w[t] = 0x01010101u * (unsigned)t;
  const unsigned char *b = (const unsigned char *)w;
  out[t] = b[4 * ((t + 1) % 8) + 1];
}
