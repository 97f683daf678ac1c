// Declarations of the Table-1 reduction checks (one file each under src/table1/).
#pragma once

#include <array>

#include "blr/algorithms/table1.hpp"

namespace blr::detail {

using RowFactory = Table1Row (*)();

Table1Row row_gradient_descent();
Table1Row row_newton();
Table1Row row_online_newton();
Table1Row row_ridge();
Table1Row row_multimodal();
Table1Row row_sgd();
Table1Row row_diagonal_newton();
Table1Row row_rmsprop();
Table1Row row_adam();
Table1Row row_dropout();
Table1Row row_ste();
Table1Row row_bayesbinn();
Table1Row row_laplace();
Table1Row row_ogn();
Table1Row row_vogn();
Table1Row row_ivon();
Table1Row row_vadam();
Table1Row row_conjugate();
Table1Row row_kalman();
Table1Row row_em();
Table1Row row_svi();
Table1Row row_vmp();
Table1Row row_nonconjugate_vmp();
Table1Row row_nonconjugate_vi();

// One line per row, in the order of Table 1 (Khan & Rue 2023).
inline constexpr std::array<RowFactory, 24> kReductionRows{
    row_gradient_descent, row_newton,  row_online_newton, row_ridge, row_multimodal,
    row_sgd,              row_diagonal_newton, row_rmsprop, row_adam, row_dropout,
    row_ste,              row_bayesbinn, row_laplace, row_ogn,  row_vogn,
    row_ivon,             row_vadam, row_conjugate, row_kalman, row_em,
    row_svi,              row_vmp,   row_nonconjugate_vmp, row_nonconjugate_vi};

}  // namespace blr::detail
