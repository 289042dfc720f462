// cp-async-16-bytes-word-race.cu with a __syncthreads after each thread's
// wait: every 16-byte copy has landed before any thread reads the second
// int of its neighbour's four: ok.
// barrier-check: --block 4
// expect ok
#include <cuda_pipeline.h>

__global__ void word_ok(const int4 *in, int *out) {
    __shared__ int4 buf[4];
    int t = threadIdx.x;
    __pipeline_memcpy_async(&buf[t], &in[t], sizeof(int4));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    const int *words = reinterpret_cast<const int *>(&buf[(t + 1) % 4]);
    out[t] = words[1];
}
