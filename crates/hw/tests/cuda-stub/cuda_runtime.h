// A host-side stand-in for the CUDA names the emitted harnesses use, so
// `g++ -fsyntax-only -x c++ -I crates/hw/tests/cuda-stub FILE.cu` checks an
// emitted program without nvcc or a GPU (crates/hw/tests/emit.rs). Only
// declarations: nothing here runs.
#pragma once
#include <cstddef>

#define __global__
#define __device__
#define __host__
#define __shared__ static
#define __constant__ static
#define __forceinline__ inline
#define __cluster_dims__(x, y, z)
#define __align__(n) __attribute__((aligned(n)))

struct dim3 {
  unsigned x, y, z;
  dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint3 { unsigned x, y, z; };
extern uint3 threadIdx, blockIdx, blockDim, gridDim;

enum cudaError_t { cudaSuccess = 0, cudaErrorNotReady = 600 };
typedef struct CUstream_st* cudaStream_t;
enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };
const unsigned cudaStreamNonBlocking = 1;
const unsigned cudaHostAllocMapped = 2;
const unsigned cudaDeviceMapHost = 8;

cudaError_t cudaStreamCreateWithFlags(cudaStream_t*, unsigned);
cudaError_t cudaStreamQuery(cudaStream_t);
cudaError_t cudaMalloc(void**, size_t);
cudaError_t cudaMemcpy(void*, const void*, size_t, cudaMemcpyKind);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaSetDeviceFlags(unsigned);
cudaError_t cudaHostAlloc(void**, size_t, unsigned);
cudaError_t cudaHostGetDevicePointer(void**, void*, unsigned);
cudaError_t cudaLaunchKernel(const void*, dim3, dim3, void**, size_t, cudaStream_t);
cudaError_t cudaLaunchCooperativeKernel(const void*, dim3, dim3, void**, size_t, cudaStream_t);
const char* cudaGetErrorName(cudaError_t);
const char* cudaGetErrorString(cudaError_t);

void __syncthreads();
int __syncthreads_count(int);
int __syncthreads_and(int);
int __syncthreads_or(int);
void __syncwarp(unsigned = 0xffffffffu);
long long __shfl_sync(unsigned, long long, int, int = 32);
long long __shfl_up_sync(unsigned, long long, unsigned, int = 32);
long long __shfl_down_sync(unsigned, long long, unsigned, int = 32);
long long __shfl_xor_sync(unsigned, long long, int, int = 32);
unsigned __ballot_sync(unsigned, int);
int __all_sync(unsigned, int);
int __any_sync(unsigned, int);
int __uni_sync(unsigned, int);
unsigned __match_any_sync(unsigned, long long);
unsigned __match_all_sync(unsigned, long long, int*);
unsigned __reduce_add_sync(unsigned, unsigned);
int __reduce_min_sync(unsigned, int);
int __reduce_max_sync(unsigned, int);
unsigned __reduce_and_sync(unsigned, unsigned);
unsigned __reduce_or_sync(unsigned, unsigned);
unsigned __reduce_xor_sync(unsigned, unsigned);
long long clock64();
size_t __cvta_generic_to_shared(const void*);
void __threadfence_block();
void __threadfence();
void __threadfence_system();
unsigned atomicAdd(unsigned*, unsigned);
