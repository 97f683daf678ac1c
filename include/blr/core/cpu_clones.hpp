// BLR_CPU_CLONES marks a kernel whose speed depends on the vector width: GCC compiles it for
// AVX-512, AVX2 and the baseline ISA on x86-64, and the loader picks one by CPU (function
// multiversioning, `target_clones`). FMA contraction is off project-wide (-ffp-contract=off), so
// every clone rounds exactly like the baseline: the numbers do not depend on the machine.
// Elsewhere one baseline copy: clang (14 takes no target_clones on a function template), other
// architectures (whose GCC knows no avx512f target), and builds that define BLR_NO_CPU_CLONES (the
// sanitizer builds of fuzz/, which need one copy to instrument). Before 2026-11-29 the core
// header rule/diagonal_kernel.hpp spelled the attribute itself, so an installed-tree consumer
// compiling with clang, or with GCC off x86-64, could not include the core's rule headers.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(BLR_NO_CPU_CLONES)
#define BLR_CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define BLR_CPU_CLONES
#endif
