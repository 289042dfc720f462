// ---- harness runtime: iterations, watchdog, output (the same in every file) ----
static long long* bc_locs_h;        // host view of the location slots
static long long* bc_locs_d;        // device view
static long long* bc_regs_d;        // device threads' registers
static long long bc_dregs[BC_NTHREADS * BC_MAXREG];  // copied back after a run
static long long bc_hregs[BC_NTHREADS * BC_MAXREG];  // host threads' registers
static cudaStream_t bc_streams[BC_NSTREAMS];
static unsigned long long bc_seed, bc_iter;
static long long bc_iterations, bc_completed;
static std::map<std::string, long long> bc_hist;
static std::atomic<int> bc_error(0);

// Records the first CUDA error.
static void bc_note(cudaError_t e) {
  if (e == cudaSuccess) return;
  int expected = 0;
  bc_error.compare_exchange_strong(expected, (int)e);
}
static cudaError_t bc_error_code() { return (cudaError_t)bc_error.load(); }

static void bc_json_string(const char* s) {
  putchar('"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') { putchar('\\'); putchar(*s); }
    else if ((unsigned char)*s < 0x20) printf("\\u%04x", (unsigned char)*s);
    else putchar(*s);
  }
  putchar('"');
}

// Prints the one JSON object and ends the process. A hung kernel is left
// as it is: _exit, never cudaDeviceReset (one process per test).
static void bc_finish(bool hung) {
  printf("{\"schema\":1,\"test\":%s,\"mapping\":\"%s\",\"iterations\":%lld,\"completed\":%lld,\"hung\":%s,\"cuda_error\":",
         bc_test_json, bc_mapping, bc_iterations, bc_completed, hung ? "true" : "false");
  cudaError_t e = bc_error_code();
  if (e == cudaSuccess) {
    printf("null");
  } else {
    std::string m = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
    bc_json_string(m.c_str());
  }
  printf(",\"outcomes\":[");
  bool first = true;
  for (auto& kv : bc_hist) {
    printf("%s{\"values\":%s,\"count\":%lld}", first ? "" : ",", kv.first.c_str(), kv.second);
    first = false;
  }
  printf("]}\n");
  fflush(stdout);
  _exit(0);
}

static BcArgs bc_args() {
  BcArgs a;
  a.locs = bc_locs_d;
  a.regs = bc_regs_d;
  a.seed = bc_seed;
  a.iter = bc_iter;
  return a;
}

static void bc_setup() {
  if (BC_MAPPED) {
    bc_note(cudaSetDeviceFlags(cudaDeviceMapHost));
    bc_note(cudaHostAlloc((void**)&bc_locs_h, sizeof(long long) * BC_NLOCS, cudaHostAllocMapped));
    bc_note(cudaHostGetDevicePointer((void**)&bc_locs_d, bc_locs_h, 0));
  } else {
    bc_locs_h = (long long*)calloc(BC_NLOCS, sizeof(long long));
    bc_note(cudaMalloc((void**)&bc_locs_d, sizeof(long long) * BC_NLOCS));
  }
  bc_note(cudaMalloc((void**)&bc_regs_d, sizeof(bc_dregs)));
  for (int s = 0; s < BC_NSTREAMS; s++) bc_note(cudaStreamCreateWithFlags(&bc_streams[s], cudaStreamNonBlocking));
  if (bc_error_code() != cudaSuccess) bc_finish(false);
}

// Before a run (nothing runs on the device): initial values, zero registers.
static void bc_reset() {
  memset(bc_dregs, 0, sizeof(bc_dregs));
  memset(bc_hregs, 0, sizeof(bc_hregs));
  if (BC_MAPPED) {
    for (int l = 0; l < BC_NLOCS; l++) bc_locs_h[l] = bc_loc_init[l];
  } else {
    bc_note(cudaMemcpy(bc_locs_d, bc_loc_init, sizeof(long long) * BC_NLOCS, cudaMemcpyHostToDevice));
  }
  bc_note(cudaMemcpy(bc_regs_d, bc_dregs, sizeof(bc_dregs), cudaMemcpyHostToDevice));
  bc_note(cudaDeviceSynchronize());
  if (bc_error_code() != cudaSuccess) bc_finish(false);
}

// After a completed run: the device's registers and locations.
static void bc_collect() {
  bc_note(cudaMemcpy(bc_dregs, bc_regs_d, sizeof(bc_dregs), cudaMemcpyDeviceToHost));
  if (!BC_MAPPED) bc_note(cudaMemcpy(bc_locs_h, bc_locs_d, sizeof(long long) * BC_NLOCS, cudaMemcpyDeviceToHost));
  if (bc_error_code() != cudaSuccess) bc_finish(false);
}

// Whether every stream is idle (polled, never blocking).
static bool bc_streams_idle() {
  for (int s = 0; s < BC_NSTREAMS; s++) {
    cudaError_t q = cudaStreamQuery(bc_streams[s]);
    if (q == cudaErrorNotReady) return false;
    if (q != cudaSuccess) { bc_note(q); return false; }
  }
  return true;
}
// Litmus `device_sync`: until every launched kernel has finished, polling.
static void bc_device_sync() {
  while (!bc_streams_idle() && bc_error_code() == cudaSuccess) std::this_thread::yield();
}
// Litmus `stream_query S`: one cudaStreamQuery.
static long long bc_stream_query(int s) {
  cudaError_t q = cudaStreamQuery(bc_streams[s]);
  if (q == cudaSuccess) return 1;
  if (q != cudaErrorNotReady) bc_note(q);
  return 0;
}
