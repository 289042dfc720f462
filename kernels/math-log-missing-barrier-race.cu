// As math-log-before-syncthreads-ok.cu without the barrier: the
// neighbour's logarithm is read while it may still be written. The
// branches inside `log` only compute registers (docs/ptx.md, "Unknown
// values"), so the kernel is decided: race.
// barrier-check: --block 64
// expect race
__global__ void log_race(const double *in, double *out) {
    __shared__ double s[64];
    int t = threadIdx.x;
    s[t] = log(in[t]);
    out[t] = s[(t + 1) % 64];
}
