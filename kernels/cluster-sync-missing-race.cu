// The cluster exchange without cluster.sync(): a block reads the other
// block's half while it may still be written.
// barrier-check: --arch sm_90 --block 2 --grid 2
// expect race
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void __cluster_dims__(2, 1, 1) exchange(int *buf) {
  cg::cluster_group cluster = cg::this_cluster();
  unsigned r = cluster.block_rank();
  buf[r * 2 + threadIdx.x] = (int)r;
  buf[4 + r * 2 + threadIdx.x] = buf[(1 - r) * 2 + threadIdx.x];
}
