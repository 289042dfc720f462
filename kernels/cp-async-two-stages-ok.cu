// An Ampere-style two-stage load: each thread copies its element of both
// stages into shared memory with cp.async (one async-group per stage),
// then per stage waits for the group (`__pipeline_wait_prior`), meets the
// block at __syncthreads and reads its neighbour's element. nvcc compiles
// the primitives to cp.async.ca.shared.global, cp.async.commit_group and
// cp.async.wait_group (docs/ptx.md, "Async copies"): ok.
// barrier-check: --block 4
// expect ok
#include <cuda_pipeline.h>

__global__ void two_stages(const int *in, int *out) {
    __shared__ int buf[2][4];
    int t = threadIdx.x;
#pragma unroll
    for (int k = 0; k < 2; k++) {
        __pipeline_memcpy_async(&buf[k][t], &in[k * 4 + t], sizeof(int));
        __pipeline_commit();
    }
    int sum = 0;
#pragma unroll
    for (int k = 0; k < 2; k++) {
        __pipeline_wait_prior(1 - k);
        __syncthreads();
        sum += buf[k][(t + 1) % 4];
    }
    out[t] = sum;
}
