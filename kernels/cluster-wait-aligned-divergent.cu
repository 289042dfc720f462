// A cluster of two blocks: the warp arrives together through
// barrier.cluster.arrive.aligned, then lane 0 and lane 1 wait through two
// different barrier.cluster.wait.aligned instructions (one per branch).
// PTX ISA, barrier.cluster: with .aligned every thread of the warp
// executes the same instruction, so this is undefined behaviour
// (docs/semantics.md, "The .aligned forms"; until session 38 only the
// arrive was judged, and this kernel was ok).
// barrier-check: --arch sm_90 --block 2 --grid 2
// expect ub(divergent-barrier)
__global__ void __cluster_dims__(2, 1, 1) split_wait(int *buf) {
  buf[blockIdx.x * 2 + threadIdx.x] = 1;
  asm volatile("barrier.cluster.arrive.aligned;" ::: "memory");
  if (threadIdx.x == 0) {
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
  } else {
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
  }
  buf[4 + blockIdx.x * 2 + threadIdx.x] = buf[(1 - blockIdx.x) * 2 + threadIdx.x];
}
