# The fuzz harnesses and the library sources each one needs (paths from the repository root).
# Shared by the replay build (fuzz/CMakeLists.txt, the normal compiler, linked with blr_core) and
# the libFuzzer build (fuzz/libfuzzer/CMakeLists.txt, clang, which compiles only these sources).
set(BLR_FUZZ_HARNESSES csv idx state options plot_text)
set(BLR_FUZZ_SOURCES_csv src/core/io/csv.cpp)
set(BLR_FUZZ_SOURCES_idx src/torch/data/idx.cpp)
set(BLR_FUZZ_SOURCES_state)
set(BLR_FUZZ_SOURCES_plot_text apps/blr/torch/gnuplot_text.cpp)
set(BLR_FUZZ_SOURCES_options src/core/core/option_table.cpp src/core/presets/ivon.cpp
    src/core/presets/vadam.cpp src/core/presets/vogn.cpp)
# Harnesses whose sources are not part of blr_core (the replay build compiles them too).
set(BLR_FUZZ_EXTRA_SOURCES_idx src/torch/data/idx.cpp)
set(BLR_FUZZ_EXTRA_SOURCES_plot_text apps/blr/torch/gnuplot_text.cpp)
