# Tests of the statistics group (see tests/core/CMakeLists.txt): known values
# and verdict rules, and the comparison against scipy/statsmodels, which runs
# Debian's /usr/bin/python3 on tests/core/significance_reference.py.
xwires_add_test(stats_tests
  SOURCES significance_test.cc significance_scipy_test.cc
  LIBS xwires_core nlohmann_json::nlohmann_json)
