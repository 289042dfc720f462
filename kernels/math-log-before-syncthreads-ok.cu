// Each thread takes the logarithm of its input in double precision and
// publishes it in shared memory; after `__syncthreads` it reads its
// neighbour's. nvcc inlines `log` with branches on the input's bits (its
// subnormal and special-value paths) that only compute registers: which
// way a thread goes is data and changes nothing the barrier orders
// (docs/ptx.md, "Unknown values": data-only branches). ok.
// barrier-check: --block 64
// expect ok
__global__ void log_ok(const double *in, double *out) {
    __shared__ double s[64];
    int t = threadIdx.x;
    s[t] = log(in[t]);
    __syncthreads();
    out[t] = s[(t + 1) % 64];
}
