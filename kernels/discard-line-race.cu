// Thread 0 stores the second int of a 128-byte line while thread 1
// discards the line from L2 (`cuda::discard_memory` writes the same
// `discard.global.L2`), with no barrier between. The PTX ISA defines
// the discard as a weak write of an unstable indeterminate value to the
// 128 bytes, so it races with the store (docs/ptx.md, "Instructions").
// barrier-check: --block 2
// expect race
__global__ void discard_race(int *line) {
    if (threadIdx.x == 0) {
        line[1] = 7;
    } else {
        asm volatile("discard.global.L2 [%0], 128;" ::"l"(line) : "memory");
    }
}
