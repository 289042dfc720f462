// Cooperative groups' grid sync between two phases: every thread writes
// its element, the grid syncs, and each reads an element of the next
// block. nvcc compiles `this_grid().sync()` to a block barrier, the block
// master's atomic arrival on the driver's grid workspace and its poll,
// and a block barrier (docs/ptx.md, "Grid sync"); that is the litmus
// `grid.sync`. A cooperative launch of 4 blocks of 32: ok.
// barrier-check: --block 32 --grid 4 --cooperative
// expect ok
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void two_phase(int *buf, int *out) {
    cg::grid_group grid = cg::this_grid();
    unsigned n = gridDim.x * blockDim.x;
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[i] = i;
    grid.sync();
    out[i] = buf[(i + blockDim.x) % n];
}
