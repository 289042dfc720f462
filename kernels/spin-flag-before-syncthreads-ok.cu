// A spin loop on a flag before a barrier: thread 1 raises the flag, thread
// 0 waits for it (a `volatile` loop, then a `cuda::atomic_ref` acquire
// loop), then the whole block meets at __syncthreads. Every fair schedule
// ends: ok (docs/ptx.md, "Spin loops").
// barrier-check: --block 4
// expect ok
#include <cuda/atomic>

__device__ volatile int flag;
__device__ int ready;

__global__ void spin_then_sync(int *out) {
    if (threadIdx.x == 1) {
        flag = 1;
        cuda::atomic_ref<int, cuda::thread_scope_device>(ready).store(2, cuda::memory_order_release);
    }
    if (threadIdx.x == 0) {
        while (flag == 0) {
        }
        while (cuda::atomic_ref<int, cuda::thread_scope_device>(ready).load(cuda::memory_order_acquire) != 2) {
        }
    }
    __syncthreads();
    out[threadIdx.x] = threadIdx.x;
}
