# Sources of the statistics group (significance.h), added to xwires_core (see
# src/CMakeLists.txt). Boost.Math supplies the Student t and hypergeometric
# distributions; it is header-only, so only its include directory is needed
# (found with find_path so that cross builds of the core find the host's
# headers too). Debian: libboost-math-dev (scripts/setup.sh).
find_path(XWIRES_BOOST_MATH_INCLUDE_DIR boost/math/distributions/students_t.hpp)
if(NOT XWIRES_BOOST_MATH_INCLUDE_DIR)
  message(FATAL_ERROR "the statistics library needs Boost.Math's headers "
          "(Debian: apt-get install libboost-math-dev, or bash scripts/setup.sh)")
endif()
target_sources(xwires_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/two_sample.cc
  ${CMAKE_CURRENT_LIST_DIR}/churn.cc
  ${CMAKE_CURRENT_LIST_DIR}/fdr.cc
  ${CMAKE_CURRENT_LIST_DIR}/significance.cc)
target_include_directories(xwires_core SYSTEM PRIVATE ${XWIRES_BOOST_MATH_INCLUDE_DIR})
