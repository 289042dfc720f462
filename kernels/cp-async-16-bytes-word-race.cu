// Each thread copies four ints (16 bytes, one cp.async.cg) into shared
// memory, waits for its own copy only, and reads the second int of its
// neighbour's four with no barrier in between. No thread reads the first
// int of a copy, so a model that puts a copy at its start address sees
// no conflict; the copy writes all 16 bytes (PTX ISA, "cp.async": cp-size
// bytes at the destination), and the neighbour's copy may not have
// landed: race (docs/ptx.md, "Async copies").
// barrier-check: --block 4
// expect race
#include <cuda_pipeline.h>

__global__ void word_race(const int4 *in, int *out) {
    __shared__ int4 buf[4];
    int t = threadIdx.x;
    __pipeline_memcpy_async(&buf[t], &in[t], sizeof(int4));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    const int *words = reinterpret_cast<const int *>(&buf[(t + 1) % 4]);
    out[t] = words[1];
}
