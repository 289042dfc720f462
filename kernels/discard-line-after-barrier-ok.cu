// As discard-line-race.cu, with `__syncthreads` between thread 0's store
// and thread 1's discard: the barrier orders them. ok.
// barrier-check: --block 2
// expect ok
__global__ void discard_ok(int *line) {
    if (threadIdx.x == 0) {
        line[1] = 7;
    }
    __syncthreads();
    if (threadIdx.x == 1) {
        asm volatile("discard.global.L2 [%0], 128;" ::"l"(line) : "memory");
    }
}
