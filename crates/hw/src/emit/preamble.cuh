
// ---- barrier-check harness helpers (the same in every emitted file) ----
#include <cuda_runtime.h>
#include <climits>
// A kernel-only file includes the CUDA library headers only where its
// kernel uses them (BC_USES_CG, BC_USES_ATOMIC_REF): parsing them is most of
// nvcc's time on a file this small.
#if !defined(BC_KERNEL_ONLY) || defined(BC_USES_CG)
#include <cooperative_groups.h>
#endif
#if !defined(BC_KERNEL_ONLY) || defined(BC_USES_ATOMIC_REF)
#include <cuda/atomic>
#endif
// A kernel-only file (`emit cuda --kernel-only`, for the PTX round trip)
// has no host side: it defines BC_KERNEL_ONLY and needs none of these.
#ifndef BC_KERNEL_ONLY
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <unistd.h>
#endif

// Kernel parameters of every launch.
struct BcArgs {
  long long* locs;           // location slots (device or mapped host memory)
  long long* regs;           // BC_MAXREG registers per litmus thread
  unsigned long long seed;   // run seed and iteration: start delays
  unsigned long long iter;
};

// The model's arithmetic (docs/semantics.md, "Arithmetic"): 64-bit,
// wrapping; division and remainder by zero, and their overflow, give 0.
__host__ __device__ inline long long bc_add(long long a, long long b) { return (long long)((unsigned long long)a + (unsigned long long)b); }
__host__ __device__ inline long long bc_sub(long long a, long long b) { return (long long)((unsigned long long)a - (unsigned long long)b); }
__host__ __device__ inline long long bc_mul(long long a, long long b) { return (long long)((unsigned long long)a * (unsigned long long)b); }
__host__ __device__ inline long long bc_neg(long long a) { return (long long)(0ull - (unsigned long long)a); }
__host__ __device__ inline long long bc_div(long long a, long long b) { return (b == 0 || (a == LLONG_MIN && b == -1)) ? 0 : a / b; }
__host__ __device__ inline long long bc_rem(long long a, long long b) { return (b == 0 || (a == LLONG_MIN && b == -1)) ? 0 : a % b; }
/* Shifts by less than 0 or more than 63 bits shift every bit out (the
   checker's semantics); a left shift works on the unsigned word (wraps). */
__host__ __device__ inline long long bc_shl(long long a, long long b) { return (b < 0 || b > 63) ? 0 : (long long)((unsigned long long)a << b); }
__host__ __device__ inline long long bc_shr(long long a, long long b) { return (b < 0 || b > 63) ? (a < 0 ? -1 : 0) : a >> b; }

// Litmus atomics: relaxed (litmus spec: barriers order execution), at the
// scope of the memory the location lives in.
#if !defined(BC_KERNEL_ONLY) || defined(BC_USES_ATOMIC_REF)
template <cuda::thread_scope S> __host__ __device__ inline long long bc_ld(long long* p) {
  return cuda::atomic_ref<long long, S>(*p).load(cuda::memory_order_relaxed);
}
template <cuda::thread_scope S> __host__ __device__ inline void bc_st(long long* p, long long v) {
  cuda::atomic_ref<long long, S>(*p).store(v, cuda::memory_order_relaxed);
}
template <cuda::thread_scope S> __host__ __device__ inline long long bc_xchg(long long* p, long long v) {
  return cuda::atomic_ref<long long, S>(*p).exchange(v, cuda::memory_order_relaxed);
}
template <cuda::thread_scope S> __host__ __device__ inline long long bc_fadd(long long* p, long long v) {
  return cuda::atomic_ref<long long, S>(*p).fetch_add(v, cuda::memory_order_relaxed);
}
template <cuda::thread_scope S> __host__ __device__ inline long long bc_cas(long long* p, long long e, long long n) {
  cuda::atomic_ref<long long, S>(*p).compare_exchange_strong(e, n, cuda::memory_order_relaxed);
  return e;  // the old value: e is updated when the exchange fails
}
#endif
// Plain accesses (for race checking; they carry no outcome). The harness
// reads through `volatile` so that nvcc keeps them; a kernel-only file
// spells them as PTX's plain `ld`/`st` (a `volatile` access is a strong
// one in PTX, which never races: docs/ptx.md, "Values").
#ifdef BC_KERNEL_ONLY
__device__ inline void bc_plain_read(long long* p) { long long x; asm volatile("ld.u64 %0, [%1];" : "=l"(x) : "l"(p) : "memory"); (void)x; }
__device__ inline void bc_plain_write(long long* p, long long v) { asm volatile("st.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory"); }
#else
__host__ __device__ inline void bc_plain_read(long long* p) { long long x = *(volatile long long*)p; (void)x; }
__host__ __device__ inline void bc_plain_write(long long* p, long long v) { *(volatile long long*)p = v; }
#endif

// mbarrier objects in shared memory (PTX ISA, "Parallel Synchronization and
// Communication Instructions: mbarrier"); cuda::barrier<thread_scope_block>
// in shared memory is one of these on sm_80 and later.
__device__ inline unsigned bc_smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
// PTX elect.sync (sm_90): the leader's lane id (litmus `elect.sync`).
__device__ inline unsigned bc_elect(unsigned mask) {
  unsigned d = 0;
#if __CUDA_ARCH__ >= 900
  asm volatile("{ .reg .pred bc_p; elect.sync %0|bc_p, %1; }" : "=r"(d) : "r"(mask) : "memory");
#else
  (void)mask;
#endif
  return d;
}
__device__ inline void bc_mbar_init(unsigned long long* b, long long n) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bc_smem(b)), "r"((unsigned)n) : "memory");
}
__device__ inline unsigned long long bc_mbar_arrive(unsigned long long* b) {
  unsigned long long st;
  asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(st) : "r"(bc_smem(b)) : "memory");
  return st;
}
// n arrivals in one arrive: PTX mbarrier.arrive's count operand (sm_90);
// before sm_90, n - 1 arrivals that cannot complete the phase
// (.noComplete: the last one is still pending), then one.
__device__ inline unsigned long long bc_mbar_arrive_n(unsigned long long* b, long long n) {
  unsigned long long st;
#if __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1], %2;" : "=l"(st) : "r"(bc_smem(b)), "r"((unsigned)n) : "memory");
#else
  if (n > 1) {
    asm volatile("mbarrier.arrive.noComplete.shared.b64 %0, [%1], %2;" : "=l"(st) : "r"(bc_smem(b)), "r"((unsigned)(n - 1)) : "memory");
  }
  asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(st) : "r"(bc_smem(b)) : "memory");
#endif
  return st;
}
// cuda::device::barrier_arrive_tx(B, n, tx): the transaction count first,
// then the n arrivals (the phase cannot complete in between: the arrivals
// are still pending).
__device__ inline unsigned long long bc_mbar_arrive_tx_n(unsigned long long* b, long long n, long long tx) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" :: "r"(bc_smem(b)), "r"((unsigned)tx) : "memory");
  return bc_mbar_arrive_n(b, n);
}
__device__ inline void bc_mbar_arrive_drop(unsigned long long* b) {
  unsigned long long st;
  asm volatile("mbarrier.arrive_drop.shared::cta.b64 %0, [%1];" : "=l"(st) : "r"(bc_smem(b)) : "memory");
  (void)st;
}
__device__ inline unsigned long long bc_mbar_arrive_expect_tx(unsigned long long* b, long long n) {
  unsigned long long st;
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;" : "=l"(st) : "r"(bc_smem(b)), "r"((unsigned)n) : "memory");
  return st;
}
__device__ inline void bc_mbar_expect_tx(unsigned long long* b, long long n) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" :: "r"(bc_smem(b)), "r"((unsigned)n) : "memory");
}
// The litmus `mbarrier.complete_tx` is the copy engine's completion,
// which releases the copied data to the waiters; a thread's complete-tx
// is relaxed, so the fence right before it (a release pattern) releases
// the thread's earlier writes as the statement does. The PTX front end
// reads the pair so, and a complete-tx without it as inconclusive.
__device__ inline void bc_mbar_complete_tx(unsigned long long* b, long long n) {
  asm volatile("fence.acq_rel.cta;\n\tmbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" :: "r"(bc_smem(b)), "r"((unsigned)n) : "memory");
}
__device__ inline void bc_mbar_wait(unsigned long long* b, unsigned long long st) {
  unsigned ok = 0;
  do {
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(ok) : "r"(bc_smem(b)), "l"(st) : "memory");
  } while (!ok);
}
__device__ inline void bc_mbar_wait_parity(unsigned long long* b, long long parity) {
  unsigned ok = 0;
  do {
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(ok) : "r"(bc_smem(b)), "r"((unsigned)(parity & 1)) : "memory");
  } while (!ok);
}
// One poll each (litmus `r = mbarrier.test_wait...` / `try_wait...`): 1 if
// the phase has completed. try_wait may suspend for a while first; the
// harness polls with test_wait, which the checker treats the same.
__device__ inline long long bc_mbar_test_wait_parity(unsigned long long* b, long long parity) {
  unsigned ok = 0;
  asm volatile("{\n\t.reg .pred p;\n\tmbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
               : "=r"(ok) : "r"(bc_smem(b)), "r"((unsigned)(parity & 1)) : "memory");
  return ok;
}
__device__ inline long long bc_mbar_test_wait(unsigned long long* b, unsigned long long st) {
  unsigned ok = 0;
  asm volatile("{\n\t.reg .pred p;\n\tmbarrier.test_wait.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
               : "=r"(ok) : "r"(bc_smem(b)), "l"(st) : "memory");
  return ok;
}
// bar.red: a whole-block barrier.sync on a named barrier with a reduction
// of a predicate (PTX bar.red.popc.u32 / .and.pred / .or.pred).
__device__ inline long long bc_bar_red_popc(unsigned id, long long pred) {
  unsigned v;
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %2, 0;\n\tbar.red.popc.u32 %0, %1, p;\n\t}"
               : "=r"(v) : "r"(id), "r"((unsigned)(pred != 0)) : "memory");
  return v;
}
__device__ inline long long bc_bar_red_and(unsigned id, long long pred) {
  unsigned v;
  asm volatile("{\n\t.reg .pred p, q;\n\tsetp.ne.u32 p, %2, 0;\n\tbar.red.and.pred q, %1, p;\n\tselp.u32 %0, 1, 0, q;\n\t}"
               : "=r"(v) : "r"(id), "r"((unsigned)(pred != 0)) : "memory");
  return v;
}
__device__ inline long long bc_bar_red_or(unsigned id, long long pred) {
  unsigned v;
  asm volatile("{\n\t.reg .pred p, q;\n\tsetp.ne.u32 p, %2, 0;\n\tbar.red.or.pred q, %1, p;\n\tselp.u32 %0, 1, 0, q;\n\t}"
               : "=r"(v) : "r"(id), "r"((unsigned)(pred != 0)) : "memory");
  return v;
}
__device__ inline void bc_mbar_inval(unsigned long long* b) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" :: "r"(bc_smem(b)) : "memory");
}

// Randomised start delays: a pure function of (seed, iteration, thread).
__host__ __device__ inline unsigned long long bc_mix(unsigned long long x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
__host__ __device__ inline long long bc_cycles(unsigned long long seed, unsigned long long iter, unsigned long long t) {
  unsigned long long h = bc_mix(seed ^ bc_mix(iter ^ bc_mix(t)));
  return (h & 3) == 0 ? 0 : (long long)((h >> 16) % 4096);
}
__device__ inline void bc_delay(unsigned long long seed, unsigned long long iter, unsigned long long t) {
  long long n = bc_cycles(seed, iter, t);
  long long t0 = clock64();
  while (clock64() - t0 < n) { }
}
#ifndef BC_KERNEL_ONLY
static void bc_host_delay(unsigned long long seed, unsigned long long iter, unsigned long long t) {
  volatile long long i = 0;
  for (long long n = bc_cycles(seed, iter, t); i < n; i = i + 1) { }
}
#endif
