// Thread 0 stores a double2 into shared memory (one `st.shared.v2.f64`)
// while thread 1 reads the second double of it, with no barrier between:
// race. A double is 8 bytes (PTX ISA, "Fundamental Types"); before
// session 36 the front end sized every floating-point element as 4, so
// the vector store was modelled at offsets 0 and 4 and missed the read
// at offset 8 (docs/ptx.md, "Values").
// barrier-check: --block 2
// expect race
__global__ void double2_race(double *out) {
    __shared__ double2 pair;
    if (threadIdx.x == 0) {
        pair = make_double2(1.0, 2.0);
    } else {
        out[0] = reinterpret_cast<double *>(&pair)[1];
    }
}
