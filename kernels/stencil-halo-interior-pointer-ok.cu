// A 1-D stencil passed a pointer into the middle of its allocation, as
// WEFT's RTM kernels are: it reads in[t - 1] (below the pointer, the
// halo) and in[t + 1]. A pointer parameter's buffer reaches below its
// base (docs/ptx.md, "Memory"): in[-1] is the parameter's own memory,
// not the end of another buffer nor an address in no buffer (session
// 37: for one commit it was inconclusive, which only a re-run of WEFT's
// RTM caught). Each thread writes its own word of out, after a barrier
// the tile's neighbours are read: ok.
// barrier-check: --block 32
// expect ok
#include <cuda_runtime.h>

__global__ void stencil(const float *in, float *out) {
  __shared__ float tile[34];
  int t = threadIdx.x;
  tile[t + 1] = in[t];
  if (t == 0) tile[0] = in[-1];
  if (t == 31) tile[33] = in[32];
  __syncthreads();
  out[t] = tile[t] + tile[t + 1] + tile[t + 2];
}
