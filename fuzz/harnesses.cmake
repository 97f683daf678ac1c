# The fuzz harnesses and the library sources each one needs (paths from the repository root).
# Shared by the replay build (fuzz/CMakeLists.txt, the normal compiler, linked with blr_core) and
# the libFuzzer build (fuzz/libfuzzer/CMakeLists.txt, clang, which compiles only these sources).
set(BLR_FUZZ_HARNESSES csv idx state options plot_text python_infer)
set(BLR_FUZZ_SOURCES_csv src/core/io/csv.cpp src/core/io/csv_stream.cpp)
set(BLR_FUZZ_SOURCES_idx src/torch/data/idx.cpp)
set(BLR_FUZZ_SOURCES_state src/core/core/cholesky.cpp src/core/family/gaussian_full.cpp)
set(BLR_FUZZ_SOURCES_plot_text apps/blr/gnuplot_text.cpp)
set(BLR_FUZZ_SOURCES_options src/core/core/option_table.cpp src/core/presets/ivon.cpp
    src/core/presets/vadam.cpp src/core/presets/vogn.cpp src/core/core/cholesky.cpp
    src/core/family/gaussian_full.cpp)
# blr.infer's entry points (python/src/inference.cpp) through the core functions they call.
set(BLR_FUZZ_SOURCES_python_infer src/core/inference/glm_fit.cpp src/core/inference/glm.cpp
    src/core/inference/conjugate.cpp src/core/inference/cvi.cpp src/core/inference/sensitivity.cpp
    src/core/inference/kalman.cpp src/core/inference/gmm.cpp src/core/inference/merge.cpp
    src/core/inference/intervals.cpp src/core/inference/kernels.cpp src/core/core/blas.cpp
    src/core/core/option_table.cpp src/core/inference/mixture_vi.cpp
    src/core/inference/glm_summary.cpp src/core/inference/waic.cpp
    src/core/inference/predictive_table.cpp src/core/inference/fit_statistics.cpp
    src/core/inference/conjugate_summary.cpp src/core/inference/vmp.cpp src/core/family/special.cpp
    src/core/inference/kalman_summary.cpp src/core/inference/mixture_summary.cpp
    src/core/inference/quadrature.cpp src/core/inference/gp_summary.cpp
    src/core/inference/gp_fit.cpp src/core/inference/gp_regression.cpp
    src/core/inference/gp_laplace.cpp src/core/inference/gp_hyperparameters.cpp
    src/core/inference/lbfgs.cpp src/core/inference/nelder_mead.cpp
    src/core/inference/methods.cpp src/core/core/cholesky.cpp src/core/family/gaussian_full.cpp)
# Harnesses whose sources are not part of blr_core (the replay build compiles them too).
set(BLR_FUZZ_EXTRA_SOURCES_idx src/torch/data/idx.cpp)
set(BLR_FUZZ_EXTRA_SOURCES_plot_text apps/blr/gnuplot_text.cpp)
