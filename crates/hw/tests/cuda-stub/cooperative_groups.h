// Host-side stand-in (see cuda_runtime.h in this folder).
#pragma once
namespace cooperative_groups {
struct grid_group { void sync(); };
grid_group this_grid();
}
