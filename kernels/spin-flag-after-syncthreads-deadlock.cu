// The flag thread 0 waits for is raised (by thread 32) only after the
// __syncthreads that thread 0 never reaches: warp 1 waits at the barrier
// forever, held there by warp 0, whose lanes 1-31 wait for lane 0 (PTX
// ISA, bar.sync: a warp arrives once all its non-exited lanes are there)
// while lane 0 spins (docs/ptx.md, "Spin loops"). The barrier is also
// reached by only some threads of the block in that execution, as the
// litmus reading of a `__syncthreads` a spinning thread never reaches
// says (litmus/cuda/syncthreads-one-branch-spin.litmus).
// barrier-check: --block 64
// expect deadlock, ub(divergent-barrier)
__device__ volatile int flag;

__global__ void spin_past_sync(int *out) {
    if (threadIdx.x == 0) {
        while (flag == 0) {
        }
    }
    __syncthreads();
    if (threadIdx.x == 32) {
        flag = 1;
    }
    out[threadIdx.x] = threadIdx.x;
}
