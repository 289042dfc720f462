// Two rounds of grid sync, but block 3 skips the first: the other blocks'
// second sync waits for block 3, which has left (docs/ptx.md, "Grid sync").
// barrier-check: --block 32 --grid 4 --cooperative
// expect ub(divergent-barrier)
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void rounds(int *buf) {
    cg::grid_group grid = cg::this_grid();
    for (int r = 0; r < 2; r++) {
        if (!(blockIdx.x == 3 && r == 0)) {
            grid.sync();
        }
    }
    buf[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}
