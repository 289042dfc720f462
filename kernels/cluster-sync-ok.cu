// A cluster of two blocks (sm_90, __cluster_dims__): each block writes its
// half of a global buffer, cluster.sync() (barrier.cluster.arrive and
// wait), then reads the other block's half.
// barrier-check: --arch sm_90 --block 2 --grid 2
// expect ok
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void __cluster_dims__(2, 1, 1) exchange(int *buf) {
  cg::cluster_group cluster = cg::this_cluster();
  unsigned r = cluster.block_rank();
  buf[r * 2 + threadIdx.x] = (int)r;
  cluster.sync();
  buf[4 + r * 2 + threadIdx.x] = buf[(1 - r) * 2 + threadIdx.x];
}
