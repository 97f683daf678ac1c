// Every Table-1 row passes its reduction check (the same checks `blr table1` prints).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "blr/algorithms/table1.hpp"

namespace blr {
namespace {

class Table1 : public ::testing::TestWithParam<Table1Row> {};

TEST_P(Table1, ReductionHolds) {
  const Table1Row& row = GetParam();
  const ReductionResult r = row.check();
  EXPECT_TRUE(r.pass()) << row.row << ": deviation " << r.max_deviation << " > tolerance "
                        << r.tolerance << " (" << r.note << ")";
}

INSTANTIATE_TEST_SUITE_P(Rows, Table1, ::testing::ValuesIn(table1_rows()),
                         [](const ::testing::TestParamInfo<Table1Row>& info) {
                           std::string name = info.param.row;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

TEST(Table1Registry, EveryRowOfThePapersTableIsChecked) {
  // Table 1 of Khan & Rue (2023), one name per row (RMSprop/Adam are two checks).
  const std::vector<std::string> paper = {
      "gradient-descent", "newton", "multimodal-mixture", "sgd",  "rmsprop", "adam",
      "dropout",          "ste",    "ogn",                "vogn", "bayesbinn", "conjugate-bayes",
      "laplace",          "em",     "svi",                "vmp",  "nonconjugate-vmp",
      "nonconjugate-vi"};
  std::vector<std::string> names;
  for (const auto& row : table1_rows()) names.push_back(row.row);
  for (const auto& name : paper)
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << "missing row " << name;
}

TEST(Table1Registry, RowsHaveUniqueNamesAndFiles) {
  const auto rows = table1_rows();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_FALSE(rows[i].file.empty());
    for (std::size_t j = i + 1; j < rows.size(); ++j) EXPECT_NE(rows[i].row, rows[j].row);
  }
}

}  // namespace
}  // namespace blr
