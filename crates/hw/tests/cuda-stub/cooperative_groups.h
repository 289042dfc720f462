// Host-side stand-in (see cuda_runtime.h in this folder).
#pragma once
namespace cooperative_groups {
struct grid_group {
  using arrival_token = unsigned int;
  void sync();
  arrival_token barrier_arrive();
  void barrier_wait(arrival_token&&);
};
grid_group this_grid();
struct thread_block {
  struct arrival_token {};
  arrival_token barrier_arrive();
  void barrier_wait(arrival_token&&);
};
thread_block this_thread_block();
struct coalesced_group {
  void sync();
};
coalesced_group coalesced_threads();
}
